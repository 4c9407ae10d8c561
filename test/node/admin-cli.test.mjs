// The admin CLI (`npm run admin -- ...`) against a throwaway local D1 (--persist-to a temp dir): what it
// prints, what it stores, and that the keys it makes are accepted by the Worker itself (wrangler dev on the
// same state) until revoked. Commands run in this process (`runAdmin`, the CLI's whole command layer) on a
// local D1 kept open across them, the same in-process database the CLI opens; the command line itself and the
// state's compatibility with wrangler are proven by the smoke tests at the end (a child process, wrangler's
// own `d1 execute`, and `wrangler dev` serving the keys).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unstable_readConfig } from 'wrangler';
import { sql, WRANGLER_BIN, wranglerEnv, wranglerExecute } from '../../scripts/lib/d1.mjs';
import { importWorkerModules, ROOT } from '../../scripts/lib/import-ts.mjs';
import { runProcess } from '../../scripts/lib/run-process.mjs';
import { adminTestDatabase } from './admin-in-process.mjs';
import { freePort } from './free-port.mjs';

/** How long wrangler dev's isolate may still trust a key it resolved (wrangler.toml [vars]). */
const AUTH_CACHE_TTL_MS = Number(unstable_readConfig({ config: join(ROOT, 'wrangler.toml') }, {}).vars.AUTH_CACHE_TTL_MS);

const t = adminTestDatabase('admin-cli-');
const { admin, adminJson, rows } = t;

/**
 * The real command line in a child process, as a person runs it.
 * @param {...string} args
 */
function adminProcess(...args) {
  return runProcess(process.execPath, [join(ROOT, 'scripts/admin.mjs'), ...args, '--persist-to', t.stateDir], { cwd: ROOT });
}

describe('help and usage errors', () => {
  it('--help lists every command group and exits 0', async () => {
    const r = await admin('--help');
    expect(r.code).toBe(0);
    for (const c of [
      'org create',
      'brand create',
      'user create',
      'user set-password',
      'membership add',
      'membership remove',
      'key create',
      'key list',
      'key revoke',
      'key limits',
    ]) {
      expect(r.stdout).toContain(c);
    }
    expect(r.stdout).toContain('--remote');
  });

  it.each([
    [['key', 'create', '--help'], 'key create (--org ORG_ID | --brand BRAND_ID) --name NAME'],
    [['brand', 'create', '--help'], '--timezone'],
    [['key', '--help'], 'key revoke KEY_ID'],
  ])('%j shows that help', async (args, text) => {
    const r = await admin(...args);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(text);
  });

  it.each([
    [['nope', 'thing'], 'unknown command'],
    [['key', 'create', '--name', 'x'], 'give exactly one of --org ORG_ID or --brand BRAND_ID'],
    [['key', 'create', '--org', 'a', '--brand', 'b', '--name', 'x'], 'give exactly one of'],
    [['org', 'create', '--id', 'bad id!', '--name', 'x'], '--id must be'],
    [['org', 'create', '--id', 'x', '--name', 'x', '--bogus'], "Unknown option '--bogus'"],
    [['brand', 'create', '--id', 'b', '--org', 'o', '--name', 'n', '--dataset', 'has-dash'], '--dataset must be'],
    [['brand', 'create', '--id', 'b', '--org', 'o', '--name', 'n', '--timezone', 'Mars/Base'], 'not an IANA time zone'],
    [['brand', 'create', '--id', 'b', '--org', 'o', '--name', 'n', '--currency', 'XYZ'], 'not an ISO 4217 currency code'],
    [['key', 'limits', 'key_x', '--daily-queries', '0'], '--daily-queries must be a positive integer or "default", got 0'],
    [['user', 'create', '--email', 'not-an-email'], 'not an email address'],
    [['user', 'create', '--email', 'a@b.test', '--password', 'short'], 'at least 12 characters'],
    [['org', 'list', '--remote'], '--remote cannot be combined with --local or --persist-to'],
  ])('%j exits 2 with a clear message', async (args, message) => {
    const r = await admin(...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stdout).toBe('');
  });
});

describe('organizations and brands', () => {
  it('creates an org and a brand with dataset, time zone and currency, as stored rows', async () => {
    expect(await adminJson('org', 'create', '--id', 'org_cli', '--name', 'CLI Org')).toEqual({ id: 'org_cli', name: 'CLI Org' });
    const brand = await adminJson(
      'brand',
      'create',
      '--id',
      'brand_cli',
      '--org',
      'org_cli',
      '--name',
      'CLI Brand',
      '--dataset',
      'cli_ds',
      '--timezone',
      'Europe/Paris',
      '--currency',
      'EUR',
    );
    expect(brand).toEqual({
      id: 'brand_cli',
      orgId: 'org_cli',
      name: 'CLI Brand',
      dataset: 'cli_ds',
      timezone: 'Europe/Paris',
      currency: 'EUR',
    });
    await adminJson('brand', 'create', '--id', 'brand_cli2', '--org', 'org_cli', '--name', 'Unprovisioned');
    expect(await rows("SELECT id, org_id, name, dataset, timezone, currency FROM brands WHERE org_id = 'org_cli' ORDER BY id")).toEqual([
      { id: 'brand_cli', org_id: 'org_cli', name: 'CLI Brand', dataset: 'cli_ds', timezone: 'Europe/Paris', currency: 'EUR' },
      { id: 'brand_cli2', org_id: 'org_cli', name: 'Unprovisioned', dataset: null, timezone: null, currency: null },
    ]);
    const list = await adminJson('brand', 'list', '--org', 'org_cli');
    expect(list.brands.map((b) => b.id)).toEqual(['brand_cli', 'brand_cli2']);
  });

  it.each([
    [['org', 'create', '--id', 'org_cli', '--name', 'again'], 'organization org_cli already exists'],
    [['brand', 'create', '--id', 'brand_x', '--org', 'org_missing', '--name', 'n'], 'organization org_missing does not exist'],
    [['brand', 'create', '--id', 'brand_cli', '--org', 'org_cli', '--name', 'n'], 'brand brand_cli already exists'],
    [
      ['brand', 'create', '--id', 'brand_y', '--org', 'org_cli', '--name', 'n', '--dataset', 'cli_ds'],
      'dataset cli_ds already belongs to another brand',
    ],
  ])('%j exits 1: %s', async (args, message) => {
    const r = await admin(...args);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(message);
  });

  it('stores hostile text verbatim: values are quoted, never spliced into SQL', async () => {
    // No line break: names refuse control characters since the anti-spoofing rule (test/spoofing-text.test.ts).
    const name = "x'); DROP TABLE brands; -- ; SELECT 'é\\";
    await adminJson('org', 'create', '--id', 'org_quote', '--name', name);
    expect(await rows("SELECT name, (SELECT count(*) FROM brands) AS brands FROM organizations WHERE id = 'org_quote'")).toEqual([
      { name, brands: 2 },
    ]);
  });
});

describe('users and memberships', () => {
  let verifyPassword;
  beforeAll(async () => {
    ({ verifyPassword } = await importWorkerModules({ 'src/auth/passwords.ts': ['verifyPassword'] }));
  });

  it('hashes the given password with PBKDF2-SHA256, 100,000 iterations and a 16-byte salt', async () => {
    const out = await adminJson(
      'user',
      'create',
      '--email',
      'Owner@Example.test',
      '--name',
      'Owner',
      '--password',
      'correct horse battery',
    );
    expect(out).toMatchObject({ email: 'Owner@Example.test', name: 'Owner' });
    expect(out.password).toBeUndefined();
    const [u] = await rows(sql`SELECT * FROM users WHERE id = ${out.id}`);
    expect(u.password_iterations).toBe(100_000);
    expect(u.password_salt).toMatch(/^[0-9a-f]{32}$/);
    expect(u.password_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(u)).not.toContain('correct horse');
    const stored = { hash: u.password_hash, salt: u.password_salt, iterations: u.password_iterations };
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(await verifyPassword('correct horse batterY', stored)).toBe(false);
  });

  it('without --password and no terminal, generates one and prints it once', async () => {
    const r = await admin('user', 'create', '--email', 'gen@example.test');
    expect(r.code).toBe(0);
    const password = /password \(shown once\): (\S+)/.exec(r.stdout)?.[1];
    expect(password?.length).toBeGreaterThanOrEqual(20);
    const [u] = await rows("SELECT password_hash, password_salt, password_iterations FROM users WHERE email = 'gen@example.test'");
    expect(await verifyPassword(password, { hash: u.password_hash, salt: u.password_salt, iterations: u.password_iterations })).toBe(true);
  });

  it('set-password replaces the hash (new salt) and clears a lockout', async () => {
    await rows(
      "INSERT INTO login_account_failures (user_id, source_hash, failures, locked_until, updated_at) SELECT id, 'src', 9, 99999999999999, 0 FROM users WHERE email = 'gen@example.test'",
    );
    const out = await adminJson('user', 'set-password', '--user', 'gen@example.test', '--password', 'a brand new passphrase');
    expect(out).toMatchObject({ email: 'gen@example.test' });
    expect(
      await rows("SELECT 1 FROM login_account_failures WHERE user_id = (SELECT id FROM users WHERE email = 'gen@example.test')"),
    ).toEqual([]);
    const [u] = await rows(
      "SELECT password_hash, password_salt, password_iterations, failed_logins, locked_until FROM users WHERE email = 'gen@example.test'",
    );
    expect(u).toMatchObject({ failed_logins: 0, locked_until: null, password_iterations: 100_000 });
    expect(
      await verifyPassword('a brand new passphrase', { hash: u.password_hash, salt: u.password_salt, iterations: u.password_iterations }),
    ).toBe(true);
    const missing = await admin('user', 'set-password', '--user', 'nobody@example.test', '--password', 'whatever long enough');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no user nobody@example.test');
  });

  it('refuses a second user with the same email, whatever its case', async () => {
    const r = await admin('user', 'create', '--email', 'owner@example.TEST', '--password', 'another long password');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('already exists');
  });

  it('adds and removes org and brand memberships, by email or id', async () => {
    const added = await adminJson('membership', 'add', '--user', 'owner@example.test', '--org', 'org_cli');
    expect(added).toMatchObject({ orgId: 'org_cli', brandId: null, created: true });
    const again = await adminJson('membership', 'add', '--user', added.userId, '--org', 'org_cli');
    expect(again.created).toBe(false);
    await adminJson('membership', 'add', '--user', 'gen@example.test', '--brand', 'brand_cli');
    expect(
      await rows('SELECT u.email, m.org_id, m.brand_id, m.role FROM memberships m JOIN users u ON u.id = m.user_id ORDER BY u.email'),
    ).toEqual([
      { email: 'gen@example.test', org_id: null, brand_id: 'brand_cli', role: 'admin' },
      { email: 'Owner@Example.test', org_id: 'org_cli', brand_id: null, role: 'admin' },
    ]);

    await adminJson('membership', 'remove', '--user', 'gen@example.test', '--brand', 'brand_cli');
    expect(await rows("SELECT count(*) AS n FROM memberships WHERE brand_id = 'brand_cli'")).toEqual([{ n: 0 }]);
    const gone = await admin('membership', 'remove', '--user', 'gen@example.test', '--brand', 'brand_cli');
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('does not administer brand brand_cli');
  });

  it.each([
    [['membership', 'add', '--user', 'nobody@example.test', '--org', 'org_cli'], 'no user nobody@example.test'],
    [['membership', 'add', '--user', 'gen@example.test', '--org', 'org_missing'], 'organization org_missing does not exist'],
  ])('%j exits 1: %s', async (args, message) => {
    const r = await admin(...args);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(message);
  });
});

describe('API keys', () => {
  let orgKey;
  let brandKey;

  it('creates keys whose secret is printed once and stored only as its SHA-256', async () => {
    orgKey = await adminJson('key', 'create', '--org', 'org_cli', '--name', 'org key');
    brandKey = await adminJson('key', 'create', '--brand', 'brand_cli', '--name', 'brand key', '--daily-queries', '7');
    expect(orgKey).toMatchObject({ name: 'org key', orgId: 'org_cli', brandId: null });
    expect(orgKey.secret).toMatch(/^wqk_[A-Za-z0-9_-]{43}$/);
    expect(orgKey.secret.startsWith(orgKey.prefix)).toBe(true);
    const stored = await rows('SELECT * FROM api_keys ORDER BY created_at');
    expect(stored[0]).toMatchObject({
      id: orgKey.id,
      name: 'org key',
      prefix: orgKey.prefix,
      org_id: 'org_cli',
      brand_id: null,
      revoked_at: null,
    });
    expect(stored[0].secret_hash).toBe(createHash('sha256').update(orgKey.secret).digest('hex'));
    expect(stored[1]).toMatchObject({
      id: brandKey.id,
      brand_id: 'brand_cli',
      org_id: null,
      daily_query_limit: 7,
      daily_bytes_limit: null,
    });
    expect(JSON.stringify(stored)).not.toContain(orgKey.secret);

    const text = await admin('key', 'create', '--brand', 'brand_cli', '--name', 'human');
    expect(text.stdout).toMatch(/shown once/);
    expect(text.stdout).toMatch(/^wqk_[A-Za-z0-9_-]{43}$/m);
  });

  it('refuses a key for a scope that does not exist', async () => {
    const r = await admin('key', 'create', '--brand', 'brand_missing', '--name', 'x');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('brand brand_missing does not exist');
  });

  it("refuses a name a live key of the organization has, as the console does (the org's key and its brands' share names)", async () => {
    const before = (await rows('SELECT count(*) AS n FROM api_keys'))[0]?.n;
    const r = await admin('key', 'create', '--brand', 'brand_cli', '--name', 'ORG KEY');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('a live key named "ORG KEY" already exists in this organization; choose another name');
    expect((await rows('SELECT count(*) AS n FROM api_keys'))[0]?.n).toBe(before);
  });

  it('lists keys without secrets; --org includes its brands, --brand narrows', async () => {
    const all = await adminJson('key', 'list', '--org', 'org_cli');
    expect(all.keys.map((k) => k.name)).toEqual(['org key', 'brand key', 'human']);
    expect(JSON.stringify(all)).not.toContain(orgKey.secret);
    expect(all.keys[1]).toMatchObject({
      id: brandKey.id,
      brandId: 'brand_cli',
      limits: { dailyQueries: 7, dailyBytes: null, maxBytesBilled: null, checksPerMinute: null, pageReadsPerMinute: null },
      revokedAt: null,
    });
    const narrow = await adminJson('key', 'list', '--brand', 'brand_cli');
    expect(narrow.keys.map((k) => k.name)).toEqual(['brand key', 'human']);
    const table = await admin('key', 'list');
    expect(table.stdout).toContain(`${orgKey.prefix}…`);
    expect(table.stdout).not.toContain(orgKey.secret);
  });

  it('sets and clears per-key limits', async () => {
    const set = await adminJson(
      'key',
      'limits',
      orgKey.id,
      '--daily-queries',
      '50',
      '--max-bytes-billed',
      '1048576',
      '--checks-per-minute',
      '7',
    );
    expect(set.limits).toEqual({
      dailyQueries: 50,
      dailyBytes: null,
      maxBytesBilled: 1048576,
      checksPerMinute: 7,
      pageReadsPerMinute: null,
      maxRunningJobs: null,
      jobTimeoutMs: null,
    });
    const cleared = await adminJson('key', 'limits', orgKey.id, '--daily-queries', 'default', '--checks-per-minute', 'default');
    expect(cleared.limits).toEqual({
      dailyQueries: null,
      dailyBytes: null,
      maxBytesBilled: 1048576,
      checksPerMinute: null,
      pageReadsPerMinute: null,
      maxRunningJobs: null,
      jobTimeoutMs: null,
    });
    const shown = await admin('key', 'limits', orgKey.id);
    expect(shown.stdout).toContain('daily-queries=default daily-bytes=default max-bytes-billed=1048576');
    const missing = await admin('key', 'limits', 'key_missing', '--daily-queries', '5');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no live key key_missing');
  });

  describe('against the Worker (wrangler dev on the same local state)', () => {
    let wrangler;
    let base;

    beforeAll(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      // Through the process guard, so wrangler and its workerd cannot outlive this test run.
      wrangler = spawn(
        process.execPath,
        [
          join(ROOT, 'scripts/lib/process-guard.mjs'),
          process.execPath,
          WRANGLER_BIN,
          'dev',
          '--ip',
          '127.0.0.1',
          '--port',
          String(port),
          '--persist-to',
          t.stateDir,
          '--show-interactive-dev-session=false',
          '--inspector-port',
          String(await freePort()),
        ],
        { cwd: ROOT, env: wranglerEnv(), stdio: ['pipe', 'pipe', 'pipe'] },
      );
      let log = '';
      wrangler.stdout.on('data', (d) => (log += d));
      wrangler.stderr.on('data', (d) => (log += d));
      const deadline = Date.now() + 90_000;
      for (;;) {
        try {
          await fetch(`${base}/healthz`);
          return;
        } catch {
          if (Date.now() > deadline || wrangler.exitCode !== null) throw new Error(`wrangler dev did not start:\n${log}`);
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    }, 120_000);

    afterAll(async () => {
      if (wrangler && wrangler.exitCode === null) {
        const exited = new Promise((r) => wrangler.once('exit', r));
        wrangler.kill('SIGTERM');
        await exited;
      }
    });

    const brands = (secret) => fetch(`${base}/v1/data/brands`, { headers: { authorization: `Bearer ${secret}` } });

    it('the command line (a child process) and `wrangler d1 execute` read the same stored keys', async () => {
      const query = 'SELECT id, name, revoked_at FROM api_keys ORDER BY created_at, id';
      // One after the other: side by side, a run failed with SQLITE_BUSY ("database is locked") although neither
      // command writes a row, since each opens the database file in a workerd of its own beside wrangler dev's.
      const cli = await adminProcess('key', 'list', '--brand', 'brand_cli', '--json');
      const [viaWrangler] = await wranglerExecute({ persistTo: t.stateDir }, ['--command', query]);
      expect(cli.stderr).toBe('');
      expect(cli.code).toBe(0);
      const ids = (/** @type {{ keys: { id: string }[] }} */ out) => out.keys.map((k) => k.id);
      expect(ids(JSON.parse(cli.stdout))).toEqual(ids(await adminJson('key', 'list', '--brand', 'brand_cli')));
      expect(viaWrangler).toEqual(await rows(query));
      expect(viaWrangler?.length).toBe(3);
    });

    it('accepts the created keys with their scope', async () => {
      const org = await brands(orgKey.secret);
      expect(org.status).toBe(200);
      expect(await org.json()).toEqual({
        brands: [
          // cli_ds is not in the warehouse: its coverage is unknown (null), not an error.
          {
            brandId: 'brand_cli',
            name: 'CLI Brand',
            dataset: 'cli_ds',
            timezone: 'Europe/Paris',
            queryable: true,
            currency: 'EUR',
            coverage: null,
          },
          {
            brandId: 'brand_cli2',
            name: 'Unprovisioned',
            dataset: null,
            timezone: 'UTC',
            queryable: false,
            currency: null,
            coverage: null,
          },
        ],
      });
      const brand = await brands(brandKey.secret);
      expect(await brand.json()).toEqual({
        brands: [
          {
            brandId: 'brand_cli',
            name: 'CLI Brand',
            dataset: 'cli_ds',
            timezone: 'Europe/Paris',
            queryable: true,
            currency: 'EUR',
            coverage: null,
          },
        ],
      });
    });

    it("revoke cuts the key off within the Worker's AUTH_CACHE_TTL_MS; a second revoke reports it", async () => {
      const r = await adminJson('key', 'revoke', brandKey.id);
      expect(r).toMatchObject({ id: brandKey.id, alreadyRevoked: false });
      await new Promise((done) => setTimeout(done, AUTH_CACHE_TTL_MS + 100));
      const res = await brands(brandKey.secret);
      expect(res.status).toBe(401);
      expect((await res.json()).error.code).toBe('UNAUTHORIZED');
      expect((await brands(orgKey.secret)).status).toBe(200);

      const again = await adminJson('key', 'revoke', brandKey.id);
      expect(again).toMatchObject({ alreadyRevoked: true, revokedAt: r.revokedAt });
      const unknown = await admin('key', 'revoke', 'key_nope');
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('no key key_nope');
    });
  });
});
