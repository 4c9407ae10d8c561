#!/usr/bin/env node
// `npm run dev`: the whole service on this machine, offline. Starts the local BigQuery-compatible warehouse,
// writes .dev.vars for it, applies schema.sql and the demo seed to the local D1 that `wrangler dev` uses,
// starts `wrangler dev`, and prints the demo credentials. State that must survive restarts (service account,
// secrets, demo key secrets and admin passwords) lives in .dev/ (git-ignored), so restarts are fast and the
// printed keys keep working. Ctrl-C / SIGTERM stops everything it started.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { d1Execute, WRANGLER_BIN, wranglerEnv } from '../scripts/lib/d1.mjs';
import { importWorkerModules, ROOT } from '../scripts/lib/import-ts.mjs';
import { createServiceAccount, serviceAccountFromJson } from './warehouse/service-account.mjs';
import { startWarehouse } from './warehouse/server.mjs';

const HOST = '127.0.0.1';
const DEV_DIR = join(ROOT, '.dev');
const FILES = {
  serviceAccount: join(DEV_DIR, 'service-account.json'),
  secrets: join(DEV_DIR, 'secrets.json'),
  credentials: join(DEV_DIR, 'credentials.json'),
  bootstrapSql: join(DEV_DIR, 'bootstrap.sql'),
  pid: join(DEV_DIR, 'dev.pid'),
  devVars: join(ROOT, '.dev.vars'),
};
/** Variables `npm run dev` owns in .dev.vars; any other line there is kept as the developer wrote it. */
const MANAGED_VARS = ['BIGQUERY_API_BASE', 'GCP_SERVICE_ACCOUNT_JSON', 'CURSOR_SECRET', 'SESSION_SECRET'];
const DEMO_ADMIN_EMAILS = { org: 'org-admin@demo.test', brand: 'acme-admin@demo.test' };
const READY_TIMEOUT_MS = 120_000;
const STOP_GRACE_MS = 5_000;

const HELP = `usage: npm run dev [-- --port N] [-- --persist-to DIR]

Starts the local warehouse and \`wrangler dev\` with the demo tenants, and prints the demo credentials.
  --port N          port for the Worker on ${HOST} (default 8787, or $PORT)
  --persist-to DIR  local D1/KV/Durable Object state (default .wrangler/state, as wrangler uses)
State kept across restarts: .dev/ (credentials, dev service account, secrets). Delete .dev/ and
.wrangler/state to start from scratch.`;

const t0 = performance.now();
const say = (msg) => console.log(`[dev] ${msg}`);
const elapsed = () => `${Math.round(performance.now() - t0)} ms`;

/** Everything started so far, stopped in reverse order on exit. */
const running = { warehouse: null, wrangler: null };
let stopping = false;

async function main() {
  const { values: args } = parseArgs({
    options: { port: { type: 'string' }, 'persist-to': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (args.help) {
    console.log(HELP);
    return;
  }
  const port = Number(args.port ?? process.env.PORT ?? 8787);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new DevError(`--port must be a TCP port, got ${args.port ?? process.env.PORT}`);
  const persistTo = args['persist-to'];
  const baseUrl = `http://${HOST}:${port}`;

  await assertPortFree(port);
  await mkdir(DEV_DIR, { recursive: true, mode: 0o700 });
  await writeFile(FILES.pid, `${process.pid}\n`);

  const sa = await loadOrCreateServiceAccount();
  const secrets = await loadOrCreate(FILES.secrets, isSecrets, () => ({
    CURSOR_SECRET: randomBytes(32).toString('hex'),
    SESSION_SECRET: randomBytes(32).toString('hex'),
  }));

  const warehouseStarted = performance.now();
  running.warehouse = await startWarehouse({
    host: HOST,
    // Kept in .dev/ so deleting .dev/ resets everything; regenerated when the day changes.
    cacheDir: join(DEV_DIR, 'warehouse'),
    serviceAccounts: [{ clientEmail: sa.clientEmail, publicKeyPem: sa.publicKeyPem, keyId: sa.keyId || undefined }],
  });
  const { generated } = running.warehouse.startup;
  say(`local warehouse on ${running.warehouse.url}, demo data for ${running.warehouse.today} ${generated ? 'generated' : 'cached'} (${Math.round(performance.now() - warehouseStarted)} ms)`);

  await writeDevVars({
    BIGQUERY_API_BASE: running.warehouse.url,
    GCP_SERVICE_ACCOUNT_JSON: sa.json,
    CURSOR_SECRET: secrets.CURSOR_SECRET,
    SESSION_SECRET: secrets.SESSION_SECRET,
  });

  const worker = await importWorkerModules({
    'src/auth/api-keys.ts': ['generateApiKey'],
    'src/lib/ids.ts': ['randomBase64Url'],
    'src/seed/demo-catalog.ts': ['buildDemoSeed'],
  });
  const credentials = await loadOrCreateCredentials(worker, baseUrl);

  const seedStarted = performance.now();
  const statements = await worker.buildDemoSeed({
    now: Date.now(),
    keys: credentials.keys,
    admins: credentials.admins,
  });
  const schema = await readFile(join(ROOT, 'schema.sql'), 'utf8');
  const seed = statements.map((s) => `${s.trim().replace(/;+$/, '')};`).join('\n');
  await writeFile(FILES.bootstrapSql, `${schema}\n-- demo seed (src/seed/demo-catalog.ts)\n${seed}\n`, { mode: 0o600 });
  await d1Execute({ persistTo }, { file: FILES.bootstrapSql });
  say(`applied schema.sql and ${statements.length} demo seed statements to the local D1 (${Math.round(performance.now() - seedStarted)} ms)`);

  await startWrangler(port, persistTo);
  await waitUntilReady(baseUrl);
  printBanner(credentials);
  say(`ready in ${elapsed()}; Ctrl-C stops everything`);
}

class DevError extends Error {}

/** Fails early, with advice, when the Worker's port is taken (the usual cause: another `npm run dev`). */
async function assertPortFree(port) {
  const free = await new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ host: HOST, port, exclusive: true }, () => srv.close(() => resolve(true)));
  });
  if (free) return;
  let owner = '';
  const pid = Number((await readFile(FILES.pid, 'utf8').catch(() => '')).trim());
  if (pid > 0 && pid !== process.pid && isAlive(pid)) owner = ` It looks like an earlier \`npm run dev\` (pid ${pid}) is still running.`;
  throw new DevError(
    `port ${port} on ${HOST} is already in use.${owner}\nStop whatever holds it, or run on another port: npm run dev -- --port ${port + 1}`,
  );
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function readJson(path) {
  try {
    return JSON.parse(await readFile(path, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Reads a JSON state file if it is valid, else creates it (0600: it holds secrets). */
async function loadOrCreate(path, isValid, create) {
  const existing = await readJson(path);
  if (isValid(existing)) return existing;
  const fresh = await create();
  await writeFile(path, `${JSON.stringify(fresh, null, 2)}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
  return fresh;
}

function isSecrets(v) {
  return typeof v?.CURSOR_SECRET === 'string' && v.CURSOR_SECRET.length >= 64 && typeof v?.SESSION_SECRET === 'string' && v.SESSION_SECRET.length >= 64;
}

/** The dev service account the Worker signs warehouse JWTs with; its public key is what the warehouse trusts. */
async function loadOrCreateServiceAccount() {
  const saved = await readFile(FILES.serviceAccount, 'utf8').catch(() => undefined);
  if (saved !== undefined) {
    try {
      return serviceAccountFromJson(saved.trim());
    } catch {
      say(`${relative(ROOT, FILES.serviceAccount)} is unreadable; making a new dev service account`);
    }
  }
  const sa = createServiceAccount();
  await writeFile(FILES.serviceAccount, `${sa.json}\n`, { mode: 0o600 });
  return sa;
}

/** Writes .dev.vars (read by `wrangler dev`): our variables replaced, the developer's other lines kept. */
async function writeDevVars(vars) {
  const existing = await readFile(FILES.devVars, 'utf8').catch(() => '');
  const kept = existing
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('# generated by npm run dev'))
    .filter((line) => !MANAGED_VARS.some((k) => line.startsWith(`${k}=`)));
  const lines = ['# generated by npm run dev: the four variables below are rewritten on every start; other lines are kept'];
  for (const [k, v] of Object.entries(vars)) {
    // Single quotes: dotenv takes the value literally, so the JSON's "\n" escapes stay escapes.
    if (v.includes("'") || v.includes('\n')) throw new DevError(`${k} cannot be written to .dev.vars (contains a quote or newline)`);
    lines.push(`${k}='${v}'`);
  }
  await writeFile(FILES.devVars, `${[...lines, ...kept].join('\n')}\n`, { mode: 0o600 });
}

function isCredentials(v) {
  const s = (x) => typeof x === 'string' && x.length > 0;
  return (
    s(v?.keys?.org) && s(v?.keys?.brand) && s(v?.keys?.other) &&
    s(v?.admins?.org?.email) && s(v?.admins?.org?.password) && s(v?.admins?.brand?.email) && s(v?.admins?.brand?.password)
  );
}

/** Demo key secrets and admin passwords, in the shape of shared/spec/demo-data.md; reused across restarts. */
async function loadOrCreateCredentials(worker, baseUrl) {
  const existing = await readJson(FILES.credentials);
  const base = isCredentials(existing)
    ? existing
    : {
        keys: {
          org: (await worker.generateApiKey()).secret,
          brand: (await worker.generateApiKey()).secret,
          other: (await worker.generateApiKey()).secret,
        },
        admins: {
          org: { email: DEMO_ADMIN_EMAILS.org, password: worker.randomBase64Url(18) },
          brand: { email: DEMO_ADMIN_EMAILS.brand, password: worker.randomBase64Url(18) },
        },
      };
  const credentials = { baseUrl, keys: base.keys, admins: base.admins };
  await writeFile(FILES.credentials, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  await chmod(FILES.credentials, 0o600);
  return credentials;
}

function startWrangler(port, persistTo) {
  const args = [WRANGLER_BIN, 'dev', '--ip', HOST, '--port', String(port), '--show-interactive-dev-session=false'];
  if (persistTo) args.push('--persist-to', persistTo);
  // Own process group, so stopping kills wrangler and the workerd it spawned together, and Ctrl-C reaches
  // only this script, which then stops things in order.
  const child = spawn(process.execPath, args, { cwd: ROOT, env: wranglerEnv(), stdio: ['ignore', 'inherit', 'inherit'], detached: true });
  running.wrangler = child;
  child.on('exit', (code, signal) => {
    running.wrangler = null;
    if (stopping) return;
    console.error(`[dev] wrangler dev exited (${signal ?? `code ${code}`}); stopping`);
    void stop(1);
  });
}

async function waitUntilReady(baseUrl) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (!running.wrangler) throw new DevError('wrangler dev exited before it was ready (see its output above)');
    try {
      // Any HTTP answer means the Worker is serving; /healthz is the cheapest route.
      await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2_000) });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new DevError(`wrangler dev did not answer on ${baseUrl} within ${READY_TIMEOUT_MS / 1000} s`);
}

function printBanner(credentials) {
  const { baseUrl, keys } = credentials;
  const auth = (k) => `-H 'Authorization: Bearer ${k}'`;
  const query = JSON.stringify({ brandId: 'brand_acme', sql: 'SELECT table_name, layer FROM `service-v1.acme.table_metadata`' });
  const lines = [
    '',
    `Demo credentials (also in ${relative(ROOT, FILES.credentials)}):`,
    JSON.stringify(credentials, null, 2),
    '',
    'Try:',
    `curl -s ${auth(keys.org)} ${baseUrl}/v1/data/brands`,
    `curl -s ${auth(keys.brand)} '${baseUrl}/v1/data/reports?limit=2'`,
    `curl -s ${auth(keys.brand)} ${baseUrl}/v1/data/queries`,
    `curl -s ${auth(keys.org)} -H 'content-type: application/json' -d '${query}' ${baseUrl}/v1/data/query`,
    `curl -s ${baseUrl}/v1/data/openapi.json`,
    '',
  ];
  console.log(lines.join('\n'));
}

/** Stops what was started (wrangler's process group, then the warehouse) and exits. Safe to call twice. */
async function stop(code) {
  if (stopping) return;
  stopping = true;
  const child = running.wrangler;
  if (child?.pid) {
    const exited = new Promise((r) => child.once('exit', r));
    killGroup(child.pid, 'SIGTERM');
    const timer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
    // workerd may outlive wrangler by a moment; make sure nothing of the group is left.
    killGroup(child.pid, 'SIGKILL');
  }
  if (running.warehouse) await running.warehouse.close().catch((e) => console.error(`[dev] warehouse close failed: ${e}`));
  const pid = (await readFile(FILES.pid, 'utf8').catch(() => '')).trim();
  if (pid === String(process.pid)) await rm(FILES.pid, { force: true });
  process.exit(code);
}

function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (stopping) return;
    say(`${signal}: stopping`);
    void stop(0);
  });
}

main().catch((err) => {
  console.error(`[dev] ${err instanceof DevError ? err.message : (err?.stack ?? String(err))}`);
  void stop(1);
});
