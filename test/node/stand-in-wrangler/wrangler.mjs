// A stand-in for `wrangler` (test/node/stand-in-wrangler/bin/wrangler runs it) for the tests of `npm run setup`:
// no network. It keeps the account (login, D1 databases, KV namespaces, Workers with their secrets and
// deployments) in a JSON file named by STAND_IN_WRANGLER_STATE, appends every command line to the file's `calls`,
// and prints what wrangler 4.86 prints for each command setup runs (read from wrangler's source: whoami --json,
// d1 list --json, d1 create, kv namespace list/create, d1 migrations apply, d1 execute --json, secret list/put,
// deploy). D1 SQL is real: each database is a local D1 (Miniflare) under the state file's directory, opened by the
// test file's D1 server when STAND_IN_WRANGLER_D1 names one (./d1-server.mjs: opened once, not per command), else
// in this process.
// STAND_IN_WRANGLER_FAIL=<command words> makes that command fail once, as a network error would.
import { randomUUID, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { deployTargets, parseSections } from '../../../scripts/lib/wrangler-toml.mjs';
import { d1OverLoopback } from './d1-server.mjs';

/**
 * @typedef {{ email: string, authType: string, tokenPermissions?: string[], accounts: { id: string, name: string }[] }} Login
 * @typedef {{ login: Login | null, d1: { uuid: string, name: string, created_at: string }[], kv: { id: string, title: string }[],
 *   workers: Record<string, { secrets: Record<string, string>, deployments: number }>, calls: { argv: string[], stdin?: string }[],
 *   queues?: string[], buckets?: string[], failed?: string[] }} State
 */

const stateFile = process.env.STAND_IN_WRANGLER_STATE;
if (!stateFile) {
  console.error('stand-in wrangler: STAND_IN_WRANGLER_STATE is not set');
  process.exit(2);
}
/** @type {State} */
const state = JSON.parse(readFileSync(stateFile, 'utf8'));
const argv = process.argv.slice(2);
const stdin = argv[0] === 'secret' && argv[1] === 'put' ? readFileSync(0, 'utf8') : undefined;
state.calls.push({ argv, ...(stdin === undefined ? {} : { stdin: '(secret)' }) });
const save = () => writeFileSync(stateFile, JSON.stringify(state, null, 2));

/** The value of `--flag value`, if given. */
function flag(/** @type {string} */ name) {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
}
const VALUE_FLAGS = new Set(['--env', '--config', '--command', '--secrets-file', '--format', '--file', '--name', '--persist-to']);
/** @type {string[]} */
const positionals = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i] ?? '';
  if (VALUE_FLAGS.has(a)) i++;
  else if (!a.startsWith('--')) positionals.push(a);
}
const words = positionals.join(' ');

/** @param {string} message wrangler's "✘ [ERROR]" line */
function fail(message, code = 1) {
  save();
  console.error(`\u2718 [ERROR] ${message}`);
  process.exit(code);
}

const failOnce = process.env.STAND_IN_WRANGLER_FAIL;
state.failed ??= [];
if (failOnce && words.startsWith(failOnce) && !state.failed.includes(failOnce)) {
  state.failed.push(failOnce);
  fail(`A request to the Cloudflare API (${words}) failed: fetch failed (stand-in: injected failure)`);
}

function requireLogin() {
  if (!state.login) fail('You are not authenticated. Please run `wrangler login`.');
  return /** @type {Login} */ (state.login);
}

function config() {
  const file = resolve(flag('config') ?? 'wrangler.toml');
  return { file, targets: deployTargets(parseSections(readFileSync(file, 'utf8')), flag('env')) };
}

/** The database the DB binding of the chosen environment names, as wrangler resolves it remotely (by id). */
function remoteDb() {
  const { targets } = config();
  const binding = targets.d1.find((d) => d.binding === 'DB');
  if (!binding) fail(`Couldn't find a D1 DB with the name or binding 'DB' in your wrangler.toml file.`);
  const db = state.d1.find((d) => d.uuid === binding?.id);
  if (!db)
    fail(
      `A request to the Cloudflare API (/accounts/.../d1/database/${binding?.id}) failed.\n  The database ${binding?.id} could not be found [code: 7404]`,
    );
  return /** @type {State['d1'][number]} */ (db);
}

async function withDb(/** @type {(db: import('../../../scripts/lib/d1.mjs').D1Executor) => Promise<void>} */ fn) {
  const db = remoteDb();
  const target = { persistTo: join(dirname(/** @type {string} */ (stateFile)), 'd1', db.uuid), cwd: dirname(config().file) };
  const server = process.env.STAND_IN_WRANGLER_D1;
  // d1.mjs bundles Worker code when it loads: imported only when this process opens the database itself.
  const d1 = server ? d1OverLoopback(server, target) : await (await import('../../../scripts/lib/d1.mjs')).openD1(target);
  try {
    await fn(d1);
  } finally {
    await d1.close();
  }
}

function workerName() {
  const name = config().targets.workerName;
  if (!name) fail('Required Worker name missing.');
  return /** @type {string} */ (name);
}

switch (true) {
  case words === 'whoami': {
    if (!state.login) {
      console.log(JSON.stringify({ loggedIn: false }));
      save();
      process.exit(1);
    }
    const l = state.login;
    console.log(
      JSON.stringify(
        { loggedIn: true, authType: l.authType, email: l.email, accounts: l.accounts, tokenPermissions: l.tokenPermissions },
        null,
        2,
      ),
    );
    break;
  }
  case words === 'd1 list': {
    requireLogin();
    console.log(
      JSON.stringify(
        state.d1.map((d) => ({ ...d, version: 'production', num_tables: 0, file_size: 0 })),
        null,
        2,
      ),
    );
    break;
  }
  case words.startsWith('d1 create '): {
    requireLogin();
    const name = positionals[2] ?? '';
    if (state.d1.some((d) => d.name === name))
      fail(`A request to the Cloudflare API failed.\n  A database with that name already exists [code: 7502]`);
    const db = { uuid: randomUUID(), name, created_at: new Date().toISOString() };
    state.d1.push(db);
    console.log(`\u2705 Successfully created DB '${name}' in region WEUR\nCreated your new D1 database.\n`);
    console.log(
      `To access your new D1 Database in your Worker, add the following snippet to your configuration file:\n[[d1_databases]]\nbinding = "${name.replace(/-/g, '_')}"\ndatabase_name = "${name}"\ndatabase_id = "${db.uuid}"`,
    );
    break;
  }
  case words === 'kv namespace list': {
    requireLogin();
    console.log(
      JSON.stringify(
        state.kv.map((n) => ({ ...n, supports_url_encoding: true })),
        null,
        '  ',
      ),
    );
    break;
  }
  case words.startsWith('kv namespace create '): {
    requireLogin();
    const env = flag('env');
    const title = `${env ? `${env}-` : ''}${positionals[3] ?? ''}`;
    console.log(`\u{1F300} Creating namespace with title "${title}"`);
    if (state.kv.some((n) => n.title === title)) fail(`A KV namespace with the title "${title}" already exists.`);
    const id = randomBytes(16).toString('hex');
    state.kv.push({ id, title });
    console.log(
      `\u2728 Success!\nTo access your new KV Namespace in your Worker, add the following snippet to your configuration file:\n[[kv_namespaces]]\nbinding = "${title}"\nid = "${id}"`,
    );
    break;
  }
  case words.startsWith('queues create '): {
    requireLogin();
    const name = positionals[2] ?? '';
    state.queues ??= [];
    if (state.queues.includes(name))
      fail(`A request to the Cloudflare API (/accounts/.../queues) failed.\n  Queue name already taken [code: 11009]`);
    state.queues.push(name);
    console.log(`\u{1F300} Creating queue '${name}'\n\u2705 Created queue '${name}'`);
    break;
  }
  case words.startsWith('r2 bucket create '): {
    requireLogin();
    const name = positionals[3] ?? '';
    state.buckets ??= [];
    if (state.buckets.includes(name))
      fail(
        `A request to the Cloudflare API (/accounts/.../r2/buckets) failed.\n  The bucket you tried to create already exists, and you own it. [code: 10004]`,
      );
    state.buckets.push(name);
    console.log(`Creating bucket '${name}'...\n\u2705 Created bucket '${name}' with default storage class of Standard.`);
    break;
  }
  case words === 'd1 migrations apply DB': {
    requireLogin();
    if (!argv.includes('--remote')) fail('stand-in: only --remote is modelled');
    const dir = join(dirname(config().file), 'migrations');
    if (!existsSync(dir)) fail(`No migrations folder found.`);
    await withDb(async (db) => {
      // Imported here: it loads esbuild, which the other commands (a bare Node start each) do without.
      const { applyMigrations } = await import('../../../scripts/lib/migrations.mjs');
      const applied = await applyMigrations(db, dir);
      if (applied.length === 0) {
        console.log('\u2705 No migrations to apply!');
        return;
      }
      console.log(`Migrations to be applied:\n${applied.map((n) => `\u2502 ${n} \u2502`).join('\n')}`);
      console.log(applied.map((n) => `\u2502 ${n} \u2502 \u2705 \u2502`).join('\n'));
    });
    break;
  }
  case words === 'd1 execute DB': {
    requireLogin();
    const sql = flag('command');
    if (!argv.includes('--remote') || !argv.includes('--json') || sql === undefined)
      fail('stand-in: only `d1 execute DB --remote --json --command SQL` is modelled');
    await withDb(async (db) => {
      try {
        const results = await db.execute(/** @type {string} */ (sql));
        console.log(
          JSON.stringify(
            results.map((r) => ({ results: r, success: true, meta: {} })),
            null,
            2,
          ),
        );
      } catch (e) {
        console.log(JSON.stringify({ error: { text: e instanceof Error ? e.message : String(e) } }));
        save();
        process.exit(1);
      }
    });
    break;
  }
  case words === 'secret list': {
    requireLogin();
    const name = workerName();
    const w = state.workers[name];
    if (!w) {
      fail(
        `Worker "${name}"${flag('env') ? ` (env: ${flag('env')})` : ''} not found.\nIf this is a new Worker, run \`wrangler deploy\` first to create it.`,
      );
    }
    console.log(
      JSON.stringify(
        Object.keys(w?.secrets ?? {}).map((n) => ({ name: n, type: 'secret_text' })),
        null,
        '  ',
      ),
    );
    break;
  }
  case words.startsWith('secret put '): {
    requireLogin();
    const name = workerName();
    const w = state.workers[name];
    if (!w) fail(`stand-in: secret put on a Worker that does not exist would create a draft Worker; setup must not do that`);
    if (w) w.secrets[positionals[2] ?? ''] = (stdin ?? '').trim();
    console.log(`\u2728 Success! Uploaded secret ${positionals[2]}`);
    break;
  }
  case words === 'deploy': {
    requireLogin();
    const { targets } = config();
    const name = workerName();
    for (const d of targets.d1)
      if (!state.d1.some((x) => x.uuid === d.id))
        fail(`D1 binding '${d.binding}' references database '${d.id}' which was not found [code: 10021]`);
    for (const k of targets.kv) if (!state.kv.some((x) => x.id === k.id)) fail(`KV namespace '${k.id}' is not valid. [code: 10041]`);
    for (const q of targets.queues)
      if (!state.queues?.includes(q)) fail(`Queue "${q}" does not exist. To create it, run: wrangler queues create ${q}`);
    for (const b of targets.buckets)
      if (!state.buckets?.includes(b)) fail(`R2 bucket '${b}' not found. Please use a different name and try again. [code: 10085]`);
    const w = (state.workers[name] ??= { secrets: {}, deployments: 0 });
    const secretsFile = flag('secrets-file');
    if (secretsFile) Object.assign(w.secrets, JSON.parse(readFileSync(secretsFile, 'utf8')));
    w.deployments += 1;
    console.log(
      `Total Upload: 1234.56 KiB / gzip: 401.00 KiB\nUploaded ${name} (1.23 sec)\nDeployed ${name} triggers (0.45 sec)\n  https://${name}.stand-in.workers.dev\nCurrent Version ID: ${randomUUID()}`,
    );
    break;
  }
  default:
    fail(`stand-in wrangler: unsupported command: ${argv.join(' ')}`, 2);
}
save();
