#!/usr/bin/env node
// `npm run setup`: first deploy and every upgrade of the Worker to a Cloudflare account, in one idempotent command
// (docs/deploy.md). Each step says what it did or why it skipped; --dry-run runs only the read-only wrangler
// commands and prints the ones that would change something. Every change goes through wrangler, found as
// WRANGLER_BIN (an executable), else `wrangler` on PATH (npm run puts node_modules/.bin there), else the
// repository's own; the admin CLI it runs for the first administrator gets the same one.
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { spawn } from 'node:child_process';
import { credentialsKeyFile } from './lib/brand-credentials.mjs';
import { ROOT } from './lib/import-ts.mjs';
import { createInterface } from 'node:readline/promises';
import {
  deployConfigProblems,
  deployTargets,
  isPlaceholderId,
  parseSections,
  recordId,
  recordVar,
  varEntry,
} from './lib/wrangler-toml.mjs';

const HELP = `usage: npm run setup -- [options]

Creates what the Worker needs in your Cloudflare account when it is missing and deploys it. Safe to rerun: a
rerun changes only what is missing, then deploys the current code (an upgrade).

  --env NAME               a wrangler environment from wrangler.toml, e.g. staging (own database, namespace, Worker)
  --service-account FILE   set GCP_SERVICE_ACCOUNT_JSON from this Google service-account key file
  --project ID             the Google Cloud project holding the brand datasets (BIGQUERY_PROJECT); default: the
                           service account's project_id, else asked for; never the demo's or the contract's prefix
  --location LOC           BigQuery job location of those datasets (BIGQUERY_LOCATION), e.g. US, EU, europe-west1
  --console-origin URL     origin of the admin console (CONSOLE_ORIGIN), e.g. https://data-api.example.com;
                           default: the custom domain, else the workers.dev URL of the first deploy
  --admin-email EMAIL      create the first administrator (only when the database has none) and print the sign-in URL
  --org ID                 with --admin-email: the organization it administers (created when missing)
  --org-name NAME          with --org: the organization's name when it is created (default: the id)
  --config FILE            wrangler configuration (default: wrangler.toml in the repository)
  --dry-run                run only read-only commands; print every change it would make
  -h, --help

Steps: login, configuration, warehouse, database, namespace, queues, R2 buckets, migrations, secrets, deploy, console, administrator.
See docs/deploy.md.`;

/**
 * Values BIGQUERY_PROJECT must never be in a deployment: the project the local warehouse hosts the demo under, and the
 * contract's table prefix, which callers write and the service maps to the real project (docs/deploy.md).
 */
const REFUSED_PROJECTS = {
  'demo-analytics-dev': 'the demo project `npm run dev` and the tests use',
  'service-v1': "the contract's table prefix callers write (the service maps it to your project), not a project",
};
/** Google Cloud project ids: 6-30 lowercase letters, digits and hyphens, starting with a letter (optionally domain-scoped). */
const PROJECT_ID = /^(?:[a-z0-9.-]+:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$/;
/** BigQuery locations: a multi-region (US, EU) or a region (europe-west1). */
const LOCATION = /^(?:US|EU|[a-z]+-[a-z]+\d+)$/;

/** Why `project` cannot be BIGQUERY_PROJECT, or null. */
function projectProblem(/** @type {string} */ project) {
  if (project in REFUSED_PROJECTS) return `"${project}" is ${REFUSED_PROJECTS[/** @type {keyof typeof REFUSED_PROJECTS} */ (project)]}`;
  if (!PROJECT_ID.test(project)) return `"${project}" is not a Google Cloud project id (6-30 lowercase letters, digits, hyphens)`;
  return null;
}

/** Token scopes a wrangler OAuth login must hold (wrangler whoami lists them); docs/deploy.md has API tokens'. */
export const REQUIRED_SCOPES = ['account:read', 'user:read', 'workers_scripts:write', 'd1:write', 'workers_kv:write'];
/** Secrets setup generates when the Worker lacks them: 32 random bytes, hex. */
export const GENERATED_SECRETS = ['CURSOR_SECRET', 'SESSION_SECRET', 'CREDENTIALS_KEY'];

class SetupError extends Error {}

/** The wrangler executable: WRANGLER_BIN, `wrangler` on PATH, or the repository's. */
export function findWrangler(env = process.env) {
  if (env.WRANGLER_BIN) return env.WRANGLER_BIN;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'wrangler');
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not in this directory
    }
  }
  return join(ROOT, 'node_modules', '.bin', 'wrangler');
}

/**
 * Runs a command; resolves with its exit code and output. `input` goes to its stdin.
 * @param {string} cmd @param {string[]} args
 * @param {{ input?: string, env?: NodeJS.ProcessEnv, cwd?: string }} [opts]
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string }>}
 */
function run(cmd, args, opts = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

/** The first JSON value in wrangler's output (it may print a banner or warnings before it). */
function jsonIn(/** @type {string} */ text) {
  const start = text.search(/^\s*[[{]/m);
  if (start < 0) return undefined;
  try {
    return JSON.parse(text.slice(start));
  } catch {
    return undefined;
  }
}

/**
 * Runs setup with `argv` (the arguments after `npm run setup --`).
 * @param {string[]} argv
 * @param {{ out?: (line: string) => void, env?: NodeJS.ProcessEnv, cwd?: string, ask?: (question: string) => Promise<string> }} [io]
 *   ask: how to ask for a value nothing else gives (a terminal's prompt; none when not interactive)
 * @returns {Promise<number>} exit code
 */
export async function runSetup(argv, io = {}) {
  const out = io.out ?? ((line) => console.log(line));
  const procEnv = io.env ?? process.env;
  const cwd = io.cwd ?? process.cwd();
  let o;
  try {
    o = parseArgs({
      args: argv,
      options: {
        env: { type: 'string' },
        'service-account': { type: 'string' },
        project: { type: 'string' },
        location: { type: 'string' },
        'console-origin': { type: 'string' },
        'admin-email': { type: 'string' },
        org: { type: 'string' },
        'org-name': { type: 'string' },
        config: { type: 'string' },
        'dry-run': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }).values;
  } catch (e) {
    out(`${e instanceof Error ? e.message : String(e)}\n\n${HELP}`);
    return 2;
  }
  if (o.help) {
    out(HELP);
    return 0;
  }
  if (o['admin-email'] && !o.org) {
    out('--admin-email needs --org ORG_ID: the organization the first administrator administers\n\n' + HELP);
    return 2;
  }
  const dry = o['dry-run'] === true;
  const envName = o.env;
  const config = resolve(cwd, o.config ?? join(ROOT, 'wrangler.toml'));
  const configName = relative(cwd, config) || config;
  const wrangler = findWrangler(procEnv);
  const childEnv = { ...procEnv, WRANGLER_BIN: wrangler, WRANGLER_SEND_METRICS: 'false', FORCE_COLOR: '0', NO_COLOR: '1' };
  const envArgs = [...(envName ? ['--env', envName] : []), '--config', config];
  const say = (/** @type {string} */ step, /** @type {string} */ text) => out(`[${step}] ${text}`);
  const show = (/** @type {string[]} */ args) =>
    `wrangler ${args.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' ')}`;

  /** Runs wrangler; a failure is a SetupError naming the step and quoting wrangler. */
  async function wr(
    /** @type {string} */ step,
    /** @type {string[]} */ args,
    /** @type {{ input?: string, allowFail?: boolean }} */ opts = {},
  ) {
    const r = await run(wrangler, args, { input: opts.input, env: childEnv, cwd });
    if (r.code !== 0 && !opts.allowFail) {
      throw new SetupError(`[${step}] \`${show(args)}\` failed (exit ${r.code}):\n${(r.stderr.trim() || r.stdout.trim()).slice(-2000)}`);
    }
    return r;
  }

  try {
    // The given service-account file is checked before anything changes.
    const saFile = o['service-account'];
    /** @type {{ client_email?: unknown, private_key?: unknown, private_key_id?: unknown, project_id?: unknown } | undefined} */
    let sa;
    let saText = '';
    if (saFile) {
      saText = await readFile(resolve(cwd, saFile), 'utf8').catch(() => {
        throw new SetupError(`[secrets] cannot read --service-account ${saFile}`);
      });
      try {
        sa = JSON.parse(saText);
      } catch {
        throw new SetupError(`[secrets] ${saFile} is not JSON (a Google service-account key file is)`);
      }
      if (typeof sa?.client_email !== 'string' || typeof sa?.private_key !== 'string' || typeof sa?.private_key_id !== 'string') {
        throw new SetupError(
          `[secrets] ${saFile} is not a service-account key file: it needs client_email, private_key_id and private_key`,
        );
      }
    }

    // 1. Login and the token's permissions.
    const who = await wr('login', ['whoami', '--json'], { allowFail: true });
    const me = jsonIn(who.stdout);
    const loggedIn = who.code === 0 && me?.loggedIn === true;
    if (!loggedIn && !dry) {
      throw new SetupError(
        '[login] not logged in to Cloudflare: run `npx wrangler login`, or export CLOUDFLARE_API_TOKEN (docs/deploy.md lists its permissions)',
      );
    }
    // A dry run without a login still shows every step; what only the account can tell is "needs login to check".
    const NEEDS_LOGIN = 'needs login to check';
    if (!loggedIn) say('login', `not logged in to Cloudflare (run \`npx wrangler login\` before the real run): ${NEEDS_LOGIN} the account`);
    const accounts = loggedIn && Array.isArray(me.accounts) ? me.accounts : [];
    if (accounts.length > 1 && !procEnv.CLOUDFLARE_ACCOUNT_ID) {
      throw new SetupError(
        `[login] the login reaches ${accounts.length} accounts: export CLOUDFLARE_ACCOUNT_ID with one of ${accounts.map((/** @type {any} */ a) => `${a.id} (${a.name})`).join(', ')}`,
      );
    }
    const account = accounts.find((/** @type {any} */ a) => a.id === procEnv.CLOUDFLARE_ACCOUNT_ID) ?? accounts[0];
    const identity = `${me.email ?? 'an account token'} (${me.authType}), account ${account ? `${account.name} (${account.id})` : 'unknown'}`;
    if (!loggedIn) {
      // said above
    } else if (Array.isArray(me.tokenPermissions)) {
      const missing = REQUIRED_SCOPES.filter((s) => !me.tokenPermissions.includes(s));
      if (missing.length > 0)
        throw new SetupError(`[login] ${identity} lacks the permissions ${missing.join(', ')}: run \`npx wrangler login\` again`);
      say('login', `logged in as ${identity}; the token has ${REQUIRED_SCOPES.join(', ')}`);
    } else {
      say(
        'login',
        `logged in as ${identity}; wrangler cannot list an API token's permissions, so a missing one shows up as the failing step (docs/deploy.md lists them)`,
      );
    }

    // 2. Configuration: the environment exists; where its ids go.
    const targets = deployTargets(parseSections(await readFile(config, 'utf8')), envName);
    if (!targets.envDeclared)
      throw new SetupError(`[config] ${configName} has no [env.${envName}]: add one (see the staging example at its end)`);
    const db = targets.d1.find((d) => d.binding === 'DB');
    const kv = targets.kv.find((k) => k.binding === 'OAUTH_KV');
    if (!db?.name)
      throw new SetupError(`[config] ${configName} has no D1 binding DB with a database_name${envName ? ` in [env.${envName}]` : ''}`);
    if (!kv) throw new SetupError(`[config] ${configName} has no KV binding OAUTH_KV${envName ? ` in [env.${envName}]` : ''}`);
    const worker = targets.workerName ?? '';
    say(
      'config',
      `Worker ${worker}${envName ? ` (environment ${envName})` : ''}, database ${db.name}, namespace binding OAUTH_KV, from ${configName}`,
    );

    // 2b. The warehouse: BIGQUERY_PROJECT and BIGQUERY_LOCATION of this environment's [vars]. wrangler.toml ships the
    //     demo's project; a deployment must name its own, and never the contract's prefix.
    const varsTable = `[${envName ? `env.${envName}.` : ''}vars]`;
    const tomlText = await readFile(config, 'utf8');
    const projectEntry = varEntry(tomlText, envName, 'BIGQUERY_PROJECT');
    const current = projectEntry?.value;
    const fromSa = typeof sa?.project_id === 'string' ? sa.project_id : undefined;
    let project = o.project ?? (current !== undefined && projectProblem(current) === null ? current : fromSa);
    let source = o.project ? '--project' : project === current ? configName : `the service account's project_id`;
    if (project === undefined && !dry && io.ask) {
      project = (await io.ask(`Google Cloud project that holds the brand datasets (BIGQUERY_PROJECT): `)).trim();
      source = 'your answer';
    }
    if (project === undefined) {
      const why = current === undefined ? `${varsTable} has no BIGQUERY_PROJECT` : `BIGQUERY_PROJECT ${projectProblem(current)}`;
      if (!dry)
        throw new SetupError(
          `[warehouse] ${why} (${configName}${projectEntry ? `:${projectEntry.line}` : ''}): give --project YOUR_PROJECT, or a --service-account key file (its project_id is used)`,
        );
      say('warehouse', `${why}: the real run needs --project YOUR_PROJECT (or a --service-account key file with its project_id)`);
    } else {
      const problem = projectProblem(project);
      if (problem) throw new SetupError(`[warehouse] BIGQUERY_PROJECT from ${source}: ${problem}; give --project YOUR_PROJECT`);
      if (project === current) say('warehouse', `BIGQUERY_PROJECT is ${project} (${configName}:${projectEntry?.line}): kept`);
      else if (dry) say('warehouse', `would record BIGQUERY_PROJECT = "${project}" (from ${source}) in ${varsTable} of ${configName}`);
      else {
        const line = await recordVar(config, { env: envName, name: 'BIGQUERY_PROJECT', value: project });
        say('warehouse', `BIGQUERY_PROJECT = "${project}" (from ${source}), recorded at ${configName}:${line}`);
      }
    }
    const locationEntry = varEntry(tomlText, envName, 'BIGQUERY_LOCATION');
    const location = o.location ?? locationEntry?.value ?? 'US';
    if (!LOCATION.test(location))
      throw new SetupError(
        `[warehouse] BIGQUERY_LOCATION "${location}" is not a BigQuery location (US, EU or a region such as europe-west1)`,
      );
    if (location === locationEntry?.value) say('warehouse', `BIGQUERY_LOCATION is ${location} (${configName}:${locationEntry.line}): kept`);
    else if (dry) say('warehouse', `would record BIGQUERY_LOCATION = "${location}" in ${varsTable} of ${configName}`);
    else {
      const line = await recordVar(config, { env: envName, name: 'BIGQUERY_LOCATION', value: location });
      say('warehouse', `BIGQUERY_LOCATION = "${location}", recorded at ${configName}:${line}`);
    }

    // 3. D1 database.
    const dbs = /** @type {{ uuid: string, name: string }[]} */ (
      loggedIn ? (jsonIn((await wr('d1', ['d1', 'list', '--json'])).stdout) ?? []) : []
    );
    let dbId = dbs.find((d) => d.name === db.name)?.uuid;
    if (!loggedIn)
      say(
        'd1',
        `${NEEDS_LOGIN} whether database ${db.name} exists: would run \`${show(['d1', 'create', db.name])}\` if not, and record its id at ${configName}:${db.idLine}`,
      );
    if (loggedIn && !isPlaceholderId(db.id) && db.id !== dbId) {
      throw new SetupError(
        `[d1] ${configName}:${db.idLine} has database_id ${db.id}, but the account's database ${db.name} is ${dbId ?? 'missing'}: put the right id there, or the placeholder 00000000-0000-0000-0000-000000000000 to let setup fill it in`,
      );
    }
    if (!loggedIn) {
      // said above
    } else if (!dbId) {
      const create = ['d1', 'create', db.name];
      if (dry) {
        say('d1', `would run \`${show(create)}\` and record its id at ${configName}:${db.idLine}`);
      } else {
        await wr('d1', create);
        const again = /** @type {{ uuid: string, name: string }[]} */ (jsonIn((await wr('d1', ['d1', 'list', '--json'])).stdout) ?? []);
        dbId = again.find((d) => d.name === db.name)?.uuid;
        if (!dbId) throw new SetupError(`[d1] created ${db.name}, but \`wrangler d1 list\` does not show it`);
        const line = await recordId(config, { env: envName, table: 'd1_databases', binding: 'DB', idKey: 'database_id', value: dbId });
        say('d1', `created database ${db.name} (${dbId}); recorded at ${configName}:${line}`);
      }
    } else if (isPlaceholderId(db.id)) {
      if (dry) say('d1', `database ${db.name} exists (${dbId}); would record its id at ${configName}:${db.idLine}`);
      else {
        const line = await recordId(config, { env: envName, table: 'd1_databases', binding: 'DB', idKey: 'database_id', value: dbId });
        say('d1', `database ${db.name} exists (${dbId}); recorded its id at ${configName}:${line}`);
      }
    } else {
      say('d1', `database ${db.name} exists (${dbId}) and ${configName}:${db.idLine} has its id: nothing to do`);
    }

    // 4. KV namespace (OAuth grants and clients). Titled after the Worker so environments never share one.
    const title = `${worker}-OAUTH_KV`;
    const namespaces = /** @type {{ id: string, title: string }[]} */ (
      loggedIn ? (jsonIn((await wr('kv', ['kv', 'namespace', 'list'])).stdout) ?? []) : []
    );
    if (!loggedIn) {
      say(
        'kv',
        `${NEEDS_LOGIN} the account's namespaces: would create ${title} if missing and record its id at ${configName}:${kv.idLine}`,
      );
    } else if (!isPlaceholderId(kv.id)) {
      if (!namespaces.some((n) => n.id === kv.id)) {
        throw new SetupError(
          `[kv] ${configName}:${kv.idLine} has id ${kv.id}, which is not a namespace of this account: fix it, or put the placeholder back to let setup create one`,
        );
      }
      say('kv', `namespace ${kv.id} exists and ${configName}:${kv.idLine} has its id: nothing to do`);
    } else {
      let kvId = namespaces.find((n) => n.title === title)?.id;
      if (!kvId && dry)
        say('kv', `would run \`${show(['kv', 'namespace', 'create', title])}\` and record its id at ${configName}:${kv.idLine}`);
      else if (dry) say('kv', `namespace ${title} exists (${kvId}); would record its id at ${configName}:${kv.idLine}`);
      else {
        let did = 'exists';
        if (!kvId) {
          await wr('kv', ['kv', 'namespace', 'create', title]);
          const again = /** @type {{ id: string, title: string }[]} */ (jsonIn((await wr('kv', ['kv', 'namespace', 'list'])).stdout) ?? []);
          kvId = again.find((n) => n.title === title)?.id;
          if (!kvId) throw new SetupError(`[kv] created ${title}, but \`wrangler kv namespace list\` does not show it`);
          did = 'created';
        }
        const line = await recordId(config, { env: envName, table: 'kv_namespaces', binding: 'OAUTH_KV', idKey: 'id', value: kvId });
        say('kv', `${did === 'created' ? 'created' : 'found'} namespace ${title} (${kvId}); recorded at ${configName}:${line}`);
      }
    }

    // 4b. Queues the Worker produces to and consumes (deploy fails on a missing one). `queues create` refuses a
    //     name that exists, which is the answer wanted here.
    for (const queue of targets.queues) {
      const create = ['queues', 'create', queue];
      if (dry) {
        say('queues', `would run \`${show(create)}\` (an existing queue is kept)`);
        continue;
      }
      const r = await wr('queues', create, { allowFail: true });
      if (r.code === 0) say('queues', `created queue ${queue}`);
      else if (/already taken|already exists/i.test(r.stderr + r.stdout)) say('queues', `queue ${queue} exists: nothing to do`);
      else
        throw new SetupError(`[queues] \`${show(create)}\` failed (exit ${r.code}):\n${(r.stderr.trim() || r.stdout.trim()).slice(-2000)}`);
    }

    // 4c. R2 buckets (the query-log archive, docs/deploy.md). `r2 bucket create` refuses a name the account already
    //     has ("already exists, and you own it"), which is the answer wanted here.
    for (const bucket of targets.buckets) {
      const create = ['r2', 'bucket', 'create', bucket];
      if (dry) {
        say('r2', `would run \`${show(create)}\` (an existing bucket is kept)`);
        continue;
      }
      const r = await wr('r2', create, { allowFail: true });
      if (r.code === 0) say('r2', `created bucket ${bucket}`);
      else if (/already exists/i.test(r.stderr + r.stdout)) say('r2', `bucket ${bucket} exists: nothing to do`);
      else throw new SetupError(`[r2] \`${show(create)}\` failed (exit ${r.code}):\n${(r.stderr.trim() || r.stdout.trim()).slice(-2000)}`);
    }

    // 5. Migrations: wrangler applies those not yet in the database's d1_migrations table.
    const migrate = ['d1', 'migrations', 'apply', 'DB', '--remote', ...envArgs];
    if (dry) say('migrations', `would run \`${show(migrate)}\` (applies only migrations the database has not had)`);
    else {
      const r = await wr('migrations', migrate);
      const applied = [...r.stdout.matchAll(/(\d{4}_[\w-]+\.sql)/g)].map((m) => m[1]);
      say(
        'migrations',
        /No migrations to apply/.test(r.stdout)
          ? 'the database has every migration: nothing to apply'
          : `applied ${[...new Set(applied)].join(', ') || 'the pending migrations'}`,
      );
    }

    // 6. Secrets: generated ones only when the Worker lacks them; given ones whenever given. They go up with the
    //    deploy (wrangler deploy --secrets-file: one version with code and secrets), never before the Worker exists.
    const listed = loggedIn
      ? await wr('secrets', ['secret', 'list', '--format', 'json', ...envArgs], { allowFail: true })
      : { code: 1, stdout: '', stderr: 'not found' };
    if (!loggedIn) say('secrets', `${NEEDS_LOGIN} which secrets the Worker has: each missing one below would be generated or set`);
    const existing =
      listed.code === 0 ? new Set(/** @type {{ name: string }[]} */ (jsonIn(listed.stdout) ?? []).map((s) => s.name)) : undefined;
    if (listed.code !== 0 && !/not found/i.test(listed.stderr + listed.stdout)) {
      throw new SetupError(
        `[secrets] \`${show(['secret', 'list', ...envArgs])}\` failed:\n${(listed.stderr.trim() || listed.stdout.trim()).slice(-2000)}`,
      );
    }
    if (!existing && loggedIn) say('secrets', `Worker ${worker} does not exist yet: every secret goes up with its first deploy`);
    /** @type {Record<string, string>} */
    const upload = {};
    const keyFile = credentialsKeyFile(envName, dirname(config));
    for (const name of GENERATED_SECRETS) {
      if (existing?.has(name)) {
        say('secrets', `${name} is set: kept`);
        continue;
      }
      // A CREDENTIALS_KEY generated by an earlier run that did not finish is reused: the admin CLI seals with it.
      const saved = name === 'CREDENTIALS_KEY' && existsSync(keyFile) ? (await readFile(keyFile, 'utf8')).trim() : undefined;
      if (dry) {
        say(
          'secrets',
          `${name} is missing: would ${saved ? `use the one in ${relative(cwd, keyFile)}` : 'generate one'} and set it with the deploy`,
        );
        continue;
      }
      upload[name] = saved ?? randomBytes(32).toString('hex');
      if (name === 'CREDENTIALS_KEY' && !saved) {
        await mkdir(dirname(keyFile), { recursive: true });
        await writeFile(keyFile, `${upload[name]}\n`, { mode: 0o600 });
        await chmod(keyFile, 0o600);
      }
      say(
        'secrets',
        name === 'CREDENTIALS_KEY'
          ? `${name} is missing: ${saved ? 'using' : 'generated'} ${relative(cwd, keyFile)} (the admin CLI seals brand credentials with it; keep a copy in your password manager), set with the deploy`
          : `${name} is missing: generated, set with the deploy`,
      );
    }
    if (sa) {
      if (dry) say('secrets', `would set GCP_SERVICE_ACCOUNT_JSON from ${saFile} (${sa.client_email}) with the deploy`);
      else {
        upload.GCP_SERVICE_ACCOUNT_JSON = saText.trim();
        say('secrets', `GCP_SERVICE_ACCOUNT_JSON from ${saFile} (${sa.client_email}): set with the deploy`);
      }
    } else if (existing?.has('GCP_SERVICE_ACCOUNT_JSON')) {
      say('secrets', 'GCP_SERVICE_ACCOUNT_JSON is set: kept (give --service-account FILE to replace it)');
    } else {
      say(
        'secrets',
        'GCP_SERVICE_ACCOUNT_JSON is not set and no --service-account was given: brands without their own credentials (`npm run admin -- brand credentials set`) cannot query until it is',
      );
    }

    // 6b. CONSOLE_ORIGIN: the admin console's origin, for links the Worker sends out (notifications) and the one
    //     origin it serves the console on. Given, else the custom domain, else the first deploy's workers.dev URL.
    const originEntry = varEntry(await readFile(config, 'utf8'), envName, 'CONSOLE_ORIGIN');
    let consoleOrigin = o['console-origin'];
    if (consoleOrigin !== undefined) {
      let parsed;
      try {
        parsed = new URL(consoleOrigin);
      } catch {
        parsed = undefined;
      }
      if (parsed?.protocol !== 'https:' || parsed.origin !== consoleOrigin.replace(/\/$/, ''))
        throw new SetupError(`[console] --console-origin ${consoleOrigin} is not an https origin (https://host, no path)`);
      consoleOrigin = parsed.origin;
    } else if (originEntry?.value) consoleOrigin = originEntry.value;
    else {
      const section = parseSections(await readFile(config, 'utf8')).find((x) => x.name === (envName ? `env.${envName}` : ''));
      const domain = /pattern\s*=\s*"([^"/*]+)"[^}]*custom_domain\s*=\s*true/.exec(section?.entries.get('routes')?.raw ?? '')?.[1];
      if (domain) consoleOrigin = `https://${domain}`;
    }
    if (consoleOrigin === undefined)
      say('console', `CONSOLE_ORIGIN is empty: ${dry ? 'would record' : 'recording'} the deployed URL after the deploy`);
    else if (consoleOrigin === originEntry?.value) say('console', `CONSOLE_ORIGIN is ${consoleOrigin}: kept`);
    else if (dry)
      say('console', `would record CONSOLE_ORIGIN = "${consoleOrigin}" in [${envName ? `env.${envName}.` : ''}vars] of ${configName}`);
    else {
      const line = await recordVar(config, { env: envName, name: 'CONSOLE_ORIGIN', value: consoleOrigin });
      say('console', `CONSOLE_ORIGIN = "${consoleOrigin}", recorded at ${configName}:${line}`);
    }

    // 7. Deploy: the configuration check (no placeholder ids, staging restates every binding), the views, the Worker.
    const problems = deployConfigProblems(await readFile(config, 'utf8'), envName, configName);
    const deployArgs = ['deploy', ...envArgs];
    let url;
    if (dry) {
      if (problems.length > 0 && !problems.every((p) => /placeholder/.test(p)))
        throw new SetupError(`[deploy] the configuration would be refused:\n${problems.join('\n')}`);
      say(
        'deploy',
        `would build the views (node scripts/build-views.mjs) and run \`${show([...deployArgs, ...(Object.keys(upload).length || !existing ? ['--secrets-file', '<temp file>'] : [])])}\``,
      );
    } else {
      if (problems.length > 0) throw new SetupError(`[deploy] refused before any upload:\n${problems.join('\n')}`);
      const views = await run(process.execPath, [join(ROOT, 'scripts', 'build-views.mjs')], { env: childEnv, cwd: ROOT });
      if (views.code !== 0) throw new SetupError(`[deploy] building the views failed:\n${views.stderr || views.stdout}`);
      const names = Object.keys(upload);
      let secretsDir;
      try {
        if (names.length > 0) {
          secretsDir = await mkdtemp(join(tmpdir(), 'setup-secrets-'));
          const file = join(secretsDir, 'secrets.json');
          await writeFile(file, JSON.stringify(upload), { mode: 0o600 });
          deployArgs.push('--secrets-file', file);
        }
        const r = await wr('deploy', deployArgs);
        const custom = /^\s+(\S+) \(custom domain\)/m.exec(r.stdout)?.[1];
        url = custom ? `https://${custom}` : /https:\/\/\S+\.workers\.dev/.exec(r.stdout)?.[0];
        const version = /Current Version ID:\s*(\S+)/.exec(r.stdout)?.[1];
        say(
          'deploy',
          `deployed ${worker}${version ? ` (version ${version})` : ''}${url ? ` at ${url}` : ''}${names.length ? `, with the secrets ${names.join(', ')}` : ''}`,
        );
      } finally {
        if (secretsDir) await rm(secretsDir, { recursive: true, force: true });
      }
      // The first deploy told the URL: record it as CONSOLE_ORIGIN and deploy once more so the Worker has it.
      if (consoleOrigin === undefined && url) {
        const line = await recordVar(config, { env: envName, name: 'CONSOLE_ORIGIN', value: url });
        await wr('deploy', ['deploy', ...envArgs]);
        say('console', `CONSOLE_ORIGIN = "${url}", recorded at ${configName}:${line}, and deployed again with it`);
      }
    }

    // 8. The first administrator, through the admin CLI against the deployed database.
    const adminArgs = ['--remote', ...(envName ? ['--env', envName] : []), '--config', config, '--json'];
    const admin = async (/** @type {string[]} */ args) => {
      const r = await run(process.execPath, [join(ROOT, 'scripts', 'admin.mjs'), ...args, ...adminArgs], { env: childEnv, cwd });
      if (r.code !== 0)
        throw new SetupError(`[admin] \`npm run admin -- ${args.join(' ')} --remote\` failed:\n${(r.stderr || r.stdout).trim()}`);
      return JSON.parse(r.stdout);
    };
    const signIn = url ? `${url}/admin/login` : 'https://<your Worker>/admin/login';
    if (dry && !dbId) {
      say(
        'admin',
        o['admin-email']
          ? `would create administrator ${o['admin-email']} of ${o.org} once the database exists`
          : 'no --admin-email: would create no administrator',
      );
    } else {
      const users = /** @type {{ users: { email: string }[] }} */ (await admin(['user', 'list'])).users;
      if (users.length > 0) {
        say(
          'admin',
          `the database has ${users.length} administrator login(s) (${users.map((u) => u.email).join(', ')}): none created. Sign in at ${signIn}`,
        );
      } else if (!o['admin-email']) {
        say('admin', `no administrator yet: rerun with --admin-email EMAIL --org ORG_ID to create the first one`);
      } else if (dry) {
        say('admin', `would create administrator ${o['admin-email']} of organization ${o.org} and print its password once`);
      } else {
        const orgs = /** @type {{ organizations: { id: string }[] }} */ (await admin(['org', 'list'])).organizations;
        if (!orgs.some((x) => x.id === o.org)) {
          await admin(['org', 'create', '--id', /** @type {string} */ (o.org), '--name', o['org-name'] ?? /** @type {string} */ (o.org)]);
          say('admin', `created organization ${o.org}`);
        }
        const created = await admin(['user', 'create', '--email', o['admin-email']]);
        await admin(['membership', 'add', '--user', o['admin-email'], '--org', /** @type {string} */ (o.org)]);
        say('admin', `created administrator ${o['admin-email']} of ${o.org}; password (shown once): ${created.password}`);
        say('admin', `sign in at ${signIn}`);
      }
    }
    say('done', dry ? 'dry run: nothing was changed' : `${worker} is deployed${url ? ` at ${url}` : ''}`);
    return 0;
  } catch (e) {
    if (e instanceof SetupError) {
      out(e.message);
      out('setup stopped; fix the above and rerun `npm run setup` (steps already done are skipped)');
      return 1;
    }
    throw e;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // On a terminal, setup asks for what no option or file gives (the project); elsewhere it stops and names the option.
  const rl = process.stdin.isTTY ? createInterface({ input: process.stdin, output: process.stdout }) : undefined;
  try {
    process.exitCode = await runSetup(process.argv.slice(2), rl ? { ask: (q) => rl.question(q) } : {});
  } finally {
    rl?.close();
  }
}
