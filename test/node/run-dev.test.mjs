// `npm run dev` end to end, in a throwaway state dir (--state-dir) on a free port: the credentials it prints and
// keeps, the demo tenants behind each key, the admin passwords it seeded, refusing a busy port or a second
// instance, stopping without leftovers, a restart that keeps the same credentials, one that lost them, and
// the CREDENTIALS_KEY it keeps beside the local D1 for the Worker and the admin CLI.
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { d1Execute, openD1, sql, WRANGLER_BIN, wranglerEnv } from '../../scripts/lib/d1.mjs';
import { runProcess } from '../../scripts/lib/run-process.mjs';
import { runAdminOn } from './admin-in-process.mjs';
import { importWorkerModules, ROOT } from '../../scripts/lib/import-ts.mjs';
import { createServiceAccount } from '../../dev/warehouse/service-account.mjs';
import { freePort } from './free-port.mjs';
import { DEV_PROJECT, ensureDemoDatabase } from '../../dev/warehouse/demo-data.mjs';

const READY_TIMEOUT_MS = 240_000;
const KEY_RE = /^wqk_[A-Za-z0-9_-]{43}$/;

let stateDir;
let port;
let dev;

/**
 * @typedef {{ child: import('node:child_process').ChildProcessByStdio<null, import('node:stream').Readable, import('node:stream').Readable>,
 *   out: string, exitCode: number | null, started: number, readyMs: number | null,
 *   exited: Promise<number | null>, ready: Promise<DevRun> }} DevRun
 */

/**
 * Starts dev/run-dev.mjs; `ready` resolves when it printed "ready" or exited (then `exitCode` is set).
 * @param {string[]} args
 * @returns {DevRun}
 */
function startDev(args) {
  // wrangler dev as a developer runs it: restarted when wrangler.toml changes (the reload test below relies on it; the
  // suite's other wranglers start with the watch off, see startTestWorker in ./seeded-worker.mjs).
  const env = { ...process.env, WRANGLER_CI_DISABLE_CONFIG_WATCHING: 'false' };
  const child = spawn(process.execPath, [join(ROOT, 'dev/run-dev.mjs'), ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  // `exited` and `ready` are set just below, before anyone can read them.
  const run = /** @type {DevRun} */ ({ child, out: '', exitCode: null, started: performance.now(), readyMs: null });
  child.stdout.on('data', (d) => (run.out += d));
  child.stderr.on('data', (d) => (run.out += d));
  run.exited = new Promise((resolve) => child.once('exit', (code) => resolve((run.exitCode = code))));
  run.ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready in ${READY_TIMEOUT_MS} ms:\n${run.out}`)), READY_TIMEOUT_MS);
    child.stdout.on('data', () => {
      if (run.out.includes('[dev] ready in')) {
        clearTimeout(timer);
        run.readyMs = performance.now() - run.started;
        resolve(run);
      }
    });
    run.exited.then(() => {
      clearTimeout(timer);
      resolve(run);
    });
  });
  return run;
}

/**
 * What `run` printed since `from` (a length of `run.out`), once it matches `pattern` or after `timeoutMs`, whichever
 * comes first: the caller asserts on it.
 * @param {DevRun} run @param {number} from @param {RegExp} pattern @param {number} timeoutMs
 */
async function outputSince(run, from, pattern, timeoutMs) {
  const end = Date.now() + timeoutMs;
  while (!pattern.test(run.out.slice(from)) && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
  return run.out.slice(from);
}

async function stopDev(run) {
  if (!run || run.exitCode !== null) return run?.exitCode;
  run.child.kill('SIGTERM');
  return run.exited;
}

/** Processes whose command line mentions the state dir (wrangler, workerd, the guard, run-dev itself). */
async function processesUsing(dir) {
  const found = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmd.includes(dir)) found.push(`${pid}: ${cmd.replaceAll('\0', ' ')}`);
  }
  return found;
}

/** For each demo admin in the local D1: whether the password in `creds` is the one stored. */
async function adminPasswordsMatch(creds) {
  const { verifyPassword } = await importWorkerModules({ 'src/auth/passwords.ts': ['verifyPassword'] });
  const results = await d1Execute(
    { persistTo: join(stateDir, 'wrangler-state') },
    {
      command: sql`SELECT email, password_hash, password_salt, password_iterations FROM users WHERE email IN (${creds.admins.org.email}, ${creds.admins.brand.email}) ORDER BY email`,
    },
  );
  const match = {};
  for (const u of results[0] ?? []) {
    const password = u.email === 'org-admin@demo.test' ? creds.admins.org.password : creds.admins.brand.password;
    match[String(u.email)] = await verifyPassword(password, {
      hash: u.password_hash,
      salt: u.password_salt,
      iterations: u.password_iterations,
    });
  }
  return match;
}

const brands = async (key) => {
  const res = await fetch(`http://127.0.0.1:${port}/v1/data/brands`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() };
};

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'run-dev-'));
  // A developer's own override and a stale managed value: the first must survive, the second be replaced.
  // CATALOG_CACHE_TTL_MS='0': the Worker reads a brand's stored credentials afresh on each query, so one the admin
  // CLI sets is used at once (by default within 5 s).
  await writeFile(join(stateDir, 'dev.vars'), "ROW_CAP='5'\nCATALOG_CACHE_TTL_MS='0'\nCURSOR_SECRET='stale'\n");
  // The day's demo database, as the suite's warehouse already generated it (test/global-setup.ts), placed where
  // this instance's warehouse looks for it: building 500,000 orders again is the warehouse tests' subject, not this
  // file's, and cost a third of this file's CPU. Everything else starts from nothing.
  const demo = await ensureDemoDatabase({ today: new Date().toISOString().slice(0, 10), project: DEV_PROJECT });
  await mkdir(join(stateDir, 'warehouse'));
  await copyFile(demo.path, join(stateDir, 'warehouse', basename(demo.path)));
  port = await freePort();
  dev = await startDev(['--port', String(port), '--state-dir', stateDir]).ready;
  if (dev.exitCode !== null) throw new Error(`npm run dev exited ${dev.exitCode}:\n${dev.out}`);
}, READY_TIMEOUT_MS + 10_000);

afterAll(async () => {
  await stopDev(dev);
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 60_000);

describe('npm run dev', () => {
  let credentials;

  it('applies every D1 migration once on the first start, counted once each', async () => {
    const files = (await readdir(join(ROOT, 'migrations'))).filter((f) => f.endsWith('.sql'));
    expect(files.length).toBeGreaterThan(5);
    expect(dev.out).toMatch(new RegExp(`applied ${files.length} new D1 migration\\(s\\)`));
  });

  it('keeps and prints the credentials in the shape of docs/demo-data.md, readable only by the owner', async () => {
    const path = join(stateDir, 'credentials.json');
    credentials = JSON.parse(await readFile(path, 'utf8'));
    expect(credentials).toEqual({
      baseUrl: `http://127.0.0.1:${port}`,
      keys: { org: expect.stringMatching(KEY_RE), brand: expect.stringMatching(KEY_RE), other: expect.stringMatching(KEY_RE) },
      admins: {
        org: { email: 'org-admin@demo.test', password: expect.stringMatching(/^.{20,}$/) },
        brand: { email: 'acme-admin@demo.test', password: expect.stringMatching(/^.{20,}$/) },
      },
    });
    expect(new Set(Object.values(credentials.keys)).size).toBe(3);
    expect(dev.out).toContain(JSON.stringify(credentials, null, 2));
    expect(dev.out).toContain(`curl -s -H 'Authorization: Bearer ${credentials.keys.org}' http://127.0.0.1:${port}/v1/data/brands`);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    // A fresh D1 has no demo rows made with other secrets: nothing to rotate, nothing said.
    expect(dev.out).not.toContain('rotated');
  });

  it('writes the vars file wrangler reads: the warehouse, the dev service account and both secrets, keeping other lines', async () => {
    const vars = await readFile(join(stateDir, 'dev.vars'), 'utf8');
    expect(vars).toMatch(/^ROW_CAP='5'$/m);
    expect(vars).toMatch(/^CATALOG_CACHE_TTL_MS='0'$/m);
    expect(vars).not.toContain('stale');
    expect(vars.match(/^CURSOR_SECRET=/gm)).toHaveLength(1);
    expect(vars).toMatch(/^BIGQUERY_API_BASE='http:\/\/127\.0\.0\.1:\d+'$/m);
    expect(vars).toMatch(/^CURSOR_SECRET='[0-9a-f]{64}'$/m);
    expect(vars).toMatch(/^SESSION_SECRET='[0-9a-f]{64}'$/m);
    // The local console is the Worker itself: search results' links open it.
    expect(vars).toContain(`CONSOLE_ORIGIN='http://127.0.0.1:${port}'`);
    const sa = /^GCP_SERVICE_ACCOUNT_JSON='(.*)'$/m.exec(vars)?.[1];
    expect(JSON.parse(sa ?? 'null')).toMatchObject({
      type: 'service_account',
      client_email: expect.any(String),
      private_key: expect.stringContaining('PRIVATE KEY'),
    });
    expect(JSON.parse(await readFile(join(stateDir, 'service-account.json'), 'utf8')).private_key).toBe(
      JSON.parse(sa ?? 'null').private_key,
    );
  });

  it('serves each demo key with exactly its tenants', async () => {
    expect(await brands(credentials.keys.org)).toEqual({
      status: 200,
      body: {
        brands: [
          {
            brandId: 'brand_acme',
            name: 'Acme Outdoor',
            dataset: 'acme',
            timezone: 'UTC',
            queryable: true,
            currency: 'USD',
            coverage: expect.objectContaining({ firstDay: expect.any(String), lastDay: expect.any(String) }),
          },
          {
            brandId: 'brand_globex',
            name: 'Globex Coffee',
            dataset: 'globex',
            timezone: 'UTC',
            queryable: true,
            currency: 'EUR',
            coverage: expect.objectContaining({ firstDay: expect.any(String), lastDay: expect.any(String) }),
          },
          {
            brandId: 'brand_initech',
            name: 'Initech Labs',
            dataset: null,
            timezone: 'UTC',
            queryable: false,
            currency: null,
            coverage: null,
          },
        ],
      },
    });
    expect(await brands(credentials.keys.brand)).toEqual({
      status: 200,
      body: {
        brands: [
          {
            brandId: 'brand_acme',
            name: 'Acme Outdoor',
            dataset: 'acme',
            timezone: 'UTC',
            queryable: true,
            currency: 'USD',
            coverage: expect.objectContaining({ firstDay: expect.any(String), lastDay: expect.any(String) }),
          },
        ],
      },
    });
    expect(await brands(credentials.keys.other)).toEqual({
      status: 200,
      body: {
        brands: [
          {
            brandId: 'brand_umbrella',
            name: 'Umbrella Health',
            dataset: 'umbrella',
            timezone: 'UTC',
            queryable: true,
            currency: 'GBP',
            coverage: expect.objectContaining({ firstDay: expect.any(String), lastDay: expect.any(String) }),
          },
        ],
      },
    });
    expect((await brands('wqk_not-a-real-key')).status).toBe(401);
  });

  it('runs a query through the local warehouse with the dev service account, honouring the kept ROW_CAP line', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/v1/data/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${credentials.keys.brand}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sql: 'SELECT table_name, layer FROM `service-v1.acme.table_metadata` ORDER BY table_name' }),
    });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    // ROW_CAP='5' is the developer's own line in the vars file (beforeAll): 7 tables, so 5 rows and truncated.
    expect(body).toMatchObject({ brandId: 'brand_acme', rowCount: 5, truncated: true });
    expect(body.rows).toEqual(
      expect.arrayContaining([
        { table_name: 'fact__orders', layer: 'mart' },
        { table_name: 'dim__customers', layer: 'mart' },
        { table_name: 'raw__web_events', layer: 'raw' },
      ]),
    );
  });

  it('a reload of the Worker in the middle of a long query loses nothing: the job is found, ended and read to the last row', async () => {
    const base = `http://127.0.0.1:${port}`;
    const creds = JSON.parse(await readFile(join(stateDir, 'credentials.json'), 'utf8'));
    const headers = { authorization: `Bearer ${creds.keys.brand}`, 'content-type': 'application/json' };
    const vars = await readFile(join(stateDir, 'dev.vars'), 'utf8');
    const warehouse = /^BIGQUERY_API_BASE='(.*)'$/m.exec(vars)?.[1];
    // The job outlives the reload: the local warehouse (its own process) keeps it running meanwhile.
    const marker = `reload${Date.now()}`;
    const fault = await fetch(`${warehouse}/__faults`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'slowJob', ms: 6_000, match: { op: 'insert', sql: marker, dryRun: false } }),
    });
    expect(fault.status).toBe(201);
    const sql = `SELECT order_id FROM \`service-v1.acme.fact__orders\` ORDER BY order_id LIMIT 12 /* ${marker} */`;
    const started = await fetch(`${base}/v1/data/query`, {
      method: 'POST',
      headers: { ...headers, prefer: 'respond-async' },
      body: JSON.stringify({ sql }),
    });
    expect(started.status, await started.clone().text()).toBe(202);
    const location = started.headers.get('location');

    // wrangler restarts the Worker when a file it watches changes (here wrangler.toml, touched, not changed): a new
    // isolate, nothing kept in memory. Only this instance watches it: the suite's other wranglers, which may be
    // serving another file's test at this moment, start with the watch off.
    const before = dev.out.length;
    const now = new Date();
    await utimes(join(ROOT, 'wrangler.toml'), now, now);
    expect(await outputSince(dev, before, /reload/i, 20_000), 'wrangler did not report a reload').toMatch(/reload/i);

    let job;
    for (let i = 0; i < 120; i++) {
      const res = await fetch(`${base}${location}`, { headers }).catch(() => null);
      job = res?.ok ? await res.json() : null;
      if (job && !['running', 'cancelling'].includes(job.status)) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(job).toMatchObject({ status: 'done', result: { totalRows: 12 } });
    // ROW_CAP='5' here: the rest in pages, read from BigQuery's stored result with the cursor.
    const rows = [...job.result.rows];
    for (let cursor = job.result.nextCursor; cursor;) {
      const page = await (await fetch(`${base}/v1/data/query/page`, { method: 'POST', headers, body: JSON.stringify({ cursor }) })).json();
      rows.push(...page.rows);
      cursor = page.nextCursor;
    }
    expect(new Set(rows.map((r) => r.order_id)).size).toBe(12);
  });

  it('runs the hourly cron on request at /__scheduled: the retention pass, then the planner statistics', async () => {
    const before = dev.out.length;
    const res = await fetch(`http://127.0.0.1:${port}/__scheduled?cron=${encodeURIComponent('17 * * * *')}`);
    expect([res.status, await res.text()]).toEqual([200, 'Ran scheduled event']);
    // The Worker's own log line, through wrangler's output: the handler ran (no row is past the window here).
    const said = await outputSince(dev, before, /query_log retention pass done/, 5_000);
    expect(said).toContain('"msg":"query_log retention pass done"');
    expect(said).not.toContain('PRAGMA optimize failed');
  });

  it('seeds the admin logins with the printed passwords', async () => {
    expect(await adminPasswordsMatch(credentials)).toEqual({ 'acme-admin@demo.test': true, 'org-admin@demo.test': true });
  });

  it('refuses a busy port, and a second instance on the same state dir, with advice', async () => {
    const other = await mkdtemp(join(tmpdir(), 'run-dev-other-'));
    try {
      const busy = await startDev(['--port', String(port), '--state-dir', other]).ready;
      expect(busy.exitCode).toBe(1);
      expect(busy.out).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect(busy.out).toContain('--port');
    } finally {
      await rm(other, { recursive: true, force: true });
    }
    const unreadable = await startDev(['--port', String(await freePort()), '--state-dir', stateDir, '--ready-timeout', 'soon']).ready;
    expect(unreadable.exitCode).toBe(1);
    expect(unreadable.out).toContain('--ready-timeout must be a number of seconds, got soon');
    const second = await startDev(['--port', String(await freePort()), '--state-dir', stateDir]).ready;
    expect(second.exitCode).toBe(1);
    expect(second.out).toContain(`npm run dev is already running`);
    expect(second.out).toContain(`(pid ${dev.child.pid})`);
  });

  it(
    'stops everything on SIGTERM, and a restart keeps the same credentials and data',
    async () => {
      expect(await stopDev(dev)).toBe(0);
      expect(dev.out).toContain('[dev] SIGTERM: stopping');
      // wrangler's group is stopped by the guard before run-dev exits; nothing may be left holding the state dir.
      expect(await processesUsing(stateDir)).toEqual([]);
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
      // run-dev applied the migrations in-process (scripts/lib/migrations.mjs); wrangler itself reads its records as
      // its own, so `wrangler d1 migrations apply --local` and run-dev can take turns on one database.
      const listed = await runProcess(
        process.execPath,
        [WRANGLER_BIN, 'd1', 'migrations', 'list', 'DB', '--local', '--persist-to', join(stateDir, 'wrangler-state')],
        { cwd: ROOT, env: wranglerEnv({ FORCE_COLOR: '0', NO_COLOR: '1', CI: 'true' }) },
      );
      expect(listed.stdout + listed.stderr).toContain('No migrations to apply');
      expect(listed.code).toBe(0);

      dev = await startDev(['--port', String(port), '--state-dir', stateDir]).ready;
      expect(dev.exitCode).toBeNull();
      expect(dev.out).toContain('cached');
      // Nothing new to migrate on a restart.
      expect(dev.out).toMatch(/applied 0 new D1 migration\(s\)/);
      const again = JSON.parse(await readFile(join(stateDir, 'credentials.json'), 'utf8'));
      expect(again).toEqual(credentials);
      expect((await brands(credentials.keys.brand)).body).toEqual({
        brands: [
          {
            brandId: 'brand_acme',
            name: 'Acme Outdoor',
            dataset: 'acme',
            timezone: 'UTC',
            queryable: true,
            currency: 'USD',
            coverage: expect.objectContaining({ firstDay: expect.any(String), lastDay: expect.any(String) }),
          },
        ],
      });
      console.log(`npm run dev restart: ready in ${Math.round(dev.readyMs ?? NaN)} ms`);
    },
    READY_TIMEOUT_MS,
  );

  it(
    'recovers from a lost credentials file: new credentials, the stored demo rows rotated to them, the old ones refused',
    async () => {
      expect(await stopDev(dev)).toBe(0);
      await rm(join(stateDir, 'credentials.json'));

      dev = await startDev(['--port', String(port), '--state-dir', stateDir]).ready;
      expect(dev.exitCode, dev.out).toBeNull();
      const fresh = JSON.parse(await readFile(join(stateDir, 'credentials.json'), 'utf8'));
      for (const k of ['org', 'brand', 'other']) {
        expect(fresh.keys[k]).toMatch(KEY_RE);
        expect(fresh.keys[k]).not.toBe(credentials.keys[k]);
      }
      expect(dev.out).toContain(JSON.stringify(fresh, null, 2));
      // Said once, in one line, naming exactly the demo rows it changed.
      const said = dev.out.split('\n').filter((l) => l.includes('rotated'));
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(/^\[dev\] \S*credentials\.json was missing or unreadable but the local D1 kept its demo rows: /);
      expect(said[0]).toContain(
        'rotated key_demo_org, key_demo_brand, key_other_org, user_demo_org_admin, user_demo_brand_admin to the new credentials below (no other key or user touched)',
      );

      expect(await brands(fresh.keys.org)).toMatchObject({
        status: 200,
        body: { brands: [{ brandId: 'brand_acme' }, { brandId: 'brand_globex' }, { brandId: 'brand_initech' }] },
      });
      expect(await brands(fresh.keys.brand)).toMatchObject({ status: 200, body: { brands: [{ brandId: 'brand_acme' }] } });
      for (const k of ['org', 'brand', 'other']) expect((await brands(credentials.keys[k])).status).toBe(401);
      expect(await adminPasswordsMatch(fresh)).toEqual({ 'acme-admin@demo.test': true, 'org-admin@demo.test': true });
      expect(await adminPasswordsMatch(credentials)).toEqual({ 'acme-admin@demo.test': false, 'org-admin@demo.test': false });
    },
    READY_TIMEOUT_MS,
  );

  it(
    'gives the Worker a CREDENTIALS_KEY the admin CLI finds by itself: a brand credential set locally is used by the Worker',
    async () => {
      const keyFile = join(stateDir, 'wrangler-state', 'credentials-key');
      const key = (await readFile(keyFile, 'utf8')).trim();
      expect(key).toMatch(/^[0-9a-f]{64}$/);
      expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
      const vars = await readFile(join(stateDir, 'dev.vars'), 'utf8');
      expect(vars.match(/^CREDENTIALS_KEY='(.*)'$/m)?.[1]).toBe(key);

      const creds = JSON.parse(await readFile(join(stateDir, 'credentials.json'), 'utf8'));
      const query = async (/** @type {string} */ key, /** @type {string} */ brandId) => {
        const res = await fetch(`http://127.0.0.1:${port}/v1/data/query`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ brandId, sql: `SELECT '${brandId}' AS brand` }),
        });
        return { status: res.status, body: await res.json() };
      };
      const stranger = join(stateDir, 'stranger.json');
      await writeFile(stranger, createServiceAccount({ clientEmail: 'stranger@service-v1.iam.gserviceaccount.com' }).json);
      // The admin CLI's command layer in this process (test/node/admin-cli.test.mjs runs the command line itself), on
      // this instance's local D1 while `wrangler dev` serves it, with no key-encryption secret in the environment.
      expect(process.env.CREDENTIALS_KEY).toBeUndefined();
      expect(process.env.CREDENTIALS_KEY_PREVIOUS).toBeUndefined();
      const persistTo = join(stateDir, 'wrangler-state');
      const db = await openD1({ persistTo });
      try {
        const admin = async (/** @type {string[]} */ ...args) => {
          const r = await runAdminOn(db, persistTo, args);
          expect(r.code, r.stderr).toBe(0);
          return r.stdout;
        };
        // brand_umbrella gets the dev service account the warehouse trusts: answered only if the Worker opens the row
        // (a stored row that does not open is an error, never a fall back to the default account).
        const account = join(stateDir, 'service-account.json');
        expect(await admin('brand', 'credentials', 'set', '--brand', 'brand_umbrella', '--file', account)).toMatch(
          /^stored credentials of brand brand_umbrella: /,
        );
        // brand_globex gets an account the local warehouse does not trust: refused, so the Worker signed with it.
        await admin('brand', 'credentials', 'set', '--brand', 'brand_globex', '--file', stranger);
        const shown = JSON.parse(await admin('brand', 'credentials', 'show', '--json'));
        expect(shown.credentials.map((/** @type {any} */ c) => [c.brandId, c.sealedWith])).toEqual([
          ['brand_globex', 'current'],
          ['brand_umbrella', 'current'],
        ]);
      } finally {
        await db.close();
      }

      expect(await query(creds.keys.other, 'brand_umbrella')).toMatchObject({ status: 200, body: { rows: [{ brand: 'brand_umbrella' }] } });
      const refused = await query(creds.keys.org, 'brand_globex');
      expect(refused.status).toBe(502);
      expect(refused.body.error.code).toBe('WAREHOUSE_ERROR');
      // The default account still serves a brand without a stored one.
      expect(await query(creds.keys.org, 'brand_acme')).toMatchObject({ status: 200, body: { rows: [{ brand: 'brand_acme' }] } });
    },
    READY_TIMEOUT_MS,
  );
});
