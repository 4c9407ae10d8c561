// Per-brand service accounts for any number of brands: 20 brands' keys go through the admin CLI into D1 (sealed
// under CREDENTIALS_KEY), the Worker signs each brand's queries with that brand's account (the local warehouse
// trusts all 21 and its request journal names the signer of each call), `show` never prints a private key, and
// a key rotation re-seals every row.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccount } from '../../dev/warehouse/service-account.mjs';
import { DEV_PROJECT } from '../../dev/warehouse/demo-data.mjs';
import { startWarehouse } from '../../dev/warehouse/server.mjs';
import { openD1 } from '../../scripts/lib/d1.mjs';
import { ROOT } from '../../scripts/lib/import-ts.mjs';
import { applyMigrations } from '../../scripts/lib/migrations.mjs';
import { runAdminOn } from './admin-in-process.mjs';
import { startTestWorker } from './seeded-worker.mjs';

const BRANDS = Array.from({ length: 20 }, (_, i) => {
  const n = String(i + 1).padStart(2, '0');
  return {
    id: `brand_b${n}`,
    dataset: `b${n}`,
    account: createServiceAccount({ clientEmail: `brand-b${n}@service-v1.iam.gserviceaccount.com` }),
  };
});
const MAIN = createServiceAccount({ clientEmail: 'default@service-v1.iam.gserviceaccount.com' });
const KEY_1 = randomBytes(32).toString('hex');
const KEY_2 = randomBytes(32).toString('hex');

/** @type {string} */
let stateDir;
/** @type {Awaited<ReturnType<typeof startWarehouse>>} */
let warehouse;
/** The CLI's database, kept open across commands (opening costs a workerd start); closed before the Worker opens it. */
/** @type {import('../../scripts/lib/d1.mjs').D1Executor | undefined} */
let db;

async function closeDb() {
  await db?.close();
  db = undefined;
}

/**
 * Runs the CLI in this process on the state dir, with the given key-encryption secrets in the environment.
 * @param {{ key?: string, previous?: string }} keys
 * @param {...string} args
 */
async function admin(keys, ...args) {
  const saved = { current: process.env.CREDENTIALS_KEY, previous: process.env.CREDENTIALS_KEY_PREVIOUS };
  db ??= await openD1({ persistTo: stateDir });
  try {
    if (keys.key) process.env.CREDENTIALS_KEY = keys.key;
    else delete process.env.CREDENTIALS_KEY;
    if (keys.previous) process.env.CREDENTIALS_KEY_PREVIOUS = keys.previous;
    else delete process.env.CREDENTIALS_KEY_PREVIOUS;
    return await runAdminOn(db, stateDir, args);
  } finally {
    for (const [name, v] of /** @type {const} */ ([
      ['CREDENTIALS_KEY', saved.current],
      ['CREDENTIALS_KEY_PREVIOUS', saved.previous],
    ])) {
      if (v === undefined) delete process.env[name];
      else process.env[name] = v;
    }
  }
}

/** @param {Awaited<ReturnType<typeof admin>>} r */
function ok(r) {
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.stdout;
}

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'brand-credentials-'));
  warehouse = await startWarehouse({
    // The project wrangler.toml names (BIGQUERY_PROJECT), as npm run dev's warehouse hosts it.
    project: DEV_PROJECT,
    serviceAccounts: [
      { clientEmail: MAIN.clientEmail, publicKeyPem: MAIN.publicKeyPem, keyId: MAIN.keyId },
      ...BRANDS.map(({ account: a, dataset }) => ({
        clientEmail: a.clientEmail,
        publicKeyPem: a.publicKeyPem,
        keyId: a.keyId,
        datasets: [dataset],
      })),
    ],
  });
  db = await openD1({ persistTo: stateDir });
  await applyMigrations(db);
}, 60_000);

afterAll(async () => {
  await closeDb();
  await warehouse?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

describe('brand credentials through the CLI', () => {
  it('stores 20 brands, shows them without private keys, and refuses what it cannot store', async () => {
    ok(await admin({}, 'org', 'create', '--id', 'org_many', '--name', 'Many brands'));
    for (const b of BRANDS) {
      ok(await admin({}, 'brand', 'create', '--id', b.id, '--org', 'org_many', '--name', b.id, '--dataset', b.dataset));
      const file = join(stateDir, `${b.id}.json`);
      await writeFile(file, b.account.json);
      const out = ok(await admin({ key: KEY_1 }, 'brand', 'credentials', 'set', '--brand', b.id, '--file', file));
      expect(out).toContain(`stored credentials of brand ${b.id}: ${b.account.clientEmail}`);
    }
    // Replacing says so.
    const again = ok(
      await admin({ key: KEY_1 }, 'brand', 'credentials', 'set', '--brand', 'brand_b01', '--file', join(stateDir, 'brand_b01.json')),
    );
    expect(again).toMatch(/^replaced credentials of brand brand_b01/);

    const text = ok(await admin({ key: KEY_1 }, 'brand', 'credentials', 'show'));
    const json = JSON.parse(ok(await admin({ key: KEY_1 }, 'brand', 'credentials', 'show', '--json')));
    for (const out of [text, JSON.stringify(json)]) {
      expect(out).not.toContain('PRIVATE KEY');
      for (const b of BRANDS) expect(out).not.toContain(String(JSON.parse(b.account.json).private_key).split('\n')[1]);
    }
    expect(json.credentials.map((/** @type {any} */ c) => [c.brandId, c.clientEmail, c.sealedWith])).toEqual(
      BRANDS.map((b) => [b.id, b.account.clientEmail, 'current']),
    );
    // Without the secret the CLI still lists, but cannot say which secret sealed a row.
    const blind = JSON.parse(ok(await admin({}, 'brand', 'credentials', 'show', '--brand', 'brand_b02', '--json')));
    expect(blind.credentials).toMatchObject([{ brandId: 'brand_b02', sealedWith: 'unknown' }]);

    // In the database: no private key in clear anywhere in the row.
    const [rows] = (await db?.execute('SELECT * FROM brand_credentials')) ?? [];
    expect(rows).toHaveLength(20);
    expect(JSON.stringify(rows)).not.toContain('PRIVATE KEY');

    const noKey = await admin({}, 'brand', 'credentials', 'set', '--brand', 'brand_b01', '--file', join(stateDir, 'brand_b01.json'));
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('no key-encryption secret');
    const notSa = join(stateDir, 'not-sa.json');
    await writeFile(notSa, JSON.stringify({ client_email: 'x@y', private_key: 'secret-material' }));
    const bad = await admin({ key: KEY_1 }, 'brand', 'credentials', 'set', '--brand', 'brand_b01', '--file', notSa);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('is not a service-account key file');
    expect(bad.stderr).not.toContain('secret-material');
    const noBrand = await admin(
      { key: KEY_1 },
      'brand',
      'credentials',
      'set',
      '--brand',
      'brand_nope',
      '--file',
      join(stateDir, 'brand_b01.json'),
    );
    expect(noBrand.stderr).toContain('brand brand_nope does not exist');
  }, 120_000);

  it("the Worker signs each brand's queries with that brand's account", async () => {
    const key = JSON.parse(ok(await admin({}, 'key', 'create', '--org', 'org_many', '--name', 'all brands', '--json'))).secret;
    await closeDb();
    const worker = await startTestWorker({
      config: join(ROOT, 'wrangler.toml'),
      envFiles: [],
      bindings: {
        BIGQUERY_API_BASE: { type: 'plain_text', value: warehouse.url },
        GCP_SERVICE_ACCOUNT_JSON: { type: 'plain_text', value: MAIN.json },
        CREDENTIALS_KEY: { type: 'plain_text', value: KEY_1 },
        SESSION_SECRET: { type: 'plain_text', value: randomBytes(32).toString('hex') },
        CURSOR_SECRET: { type: 'plain_text', value: randomBytes(32).toString('hex') },
      },
      dev: { server: { hostname: '127.0.0.1', port: 0 }, inspector: false, persist: stateDir, watch: false, logLevel: 'error' },
    });
    try {
      const base = new URL(await worker.url).origin;
      for (const b of BRANDS) {
        warehouse.requests.clear();
        const res = await fetch(`${base}/v1/data/query`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ brandId: b.id, sql: `SELECT '${b.id}' AS brand` }),
        });
        expect(res.status, await res.clone().text()).toBe(200);
        expect((await res.json()).rows).toEqual([{ brand: b.id }]);
        const signers = new Set(warehouse.requests.list().map((e) => e.auth.ok && e.auth.iss));
        expect([...signers]).toEqual([b.account.clientEmail]);
      }
    } finally {
      await worker.dispose();
    }
  }, 180_000);

  it('rotates: re-encrypt re-seals every row under the new secret, opening with the previous one', async () => {
    const rotated = ok(await admin({ key: KEY_2, previous: KEY_1 }, 'brand', 'credentials', 're-encrypt'));
    expect(rotated).toMatch(/^re-sealed 20 brand key\(s\) under key [0-9a-f]{16}/);
    const again = ok(await admin({ key: KEY_2, previous: KEY_1 }, 'brand', 'credentials', 're-encrypt'));
    expect(again).toMatch(/already sealed under key/);
    const json = JSON.parse(ok(await admin({ key: KEY_2 }, 'brand', 'credentials', 'show', '--json')));
    expect(new Set(json.credentials.map((/** @type {any} */ c) => c.sealedWith))).toEqual(new Set(['current']));
    // The old secret alone no longer names the rows' key.
    const old = JSON.parse(ok(await admin({ key: KEY_1 }, 'brand', 'credentials', 'show', '--brand', 'brand_b03', '--json')));
    expect(old.credentials[0].sealedWith).toBe('other');
    // Without the previous secret nothing under another key opens: reported, left as it is, exit 1.
    const stuck = await admin({ key: randomBytes(32).toString('hex') }, 'brand', 'credentials', 're-encrypt');
    expect(stuck.code).toBe(1);
    expect(stuck.stderr).toContain('20 could not be opened');

    ok(await admin({}, 'brand', 'credentials', 'clear', '--brand', 'brand_b20'));
    const none = ok(await admin({}, 'brand', 'credentials', 'show', '--brand', 'brand_b20'));
    expect(none).toContain('has no stored credentials');
    const twice = await admin({}, 'brand', 'credentials', 'clear', '--brand', 'brand_b20');
    expect(twice.code).toBe(1);
  }, 120_000);
});
