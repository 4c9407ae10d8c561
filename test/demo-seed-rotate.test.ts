// The demo seed's `rotate` mode, which `npm run dev` uses when it lost its credentials file but kept its D1: the
// demo keys' and demo admins' stored secrets move to the new ones, by id, and nothing else changes.
import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/lib/ids';
import { buildDemoSeed, DEMO_KEY_IDS, DEMO_USER_IDS, type DemoSeedInput } from '../src/seed/demo-tenants';
import { inputValue, TestBrowser } from './oauth-client';
import { seedDemo, TEST_ADMINS, TEST_KEYS } from './seed';
import { DEMO_CATALOG_FILES } from './demo-catalog';

const NEW: Pick<DemoSeedInput, 'keys' | 'admins'> = {
  keys: {
    org: 'wqk_rotatedOrgDemo000000000000000000000000000',
    brand: 'wqk_rotatedBrandAcme00000000000000000000000000',
    other: 'wqk_rotatedOrgOther0000000000000000000000000000',
  },
  admins: {
    org: { email: TEST_ADMINS.org.email, password: 'rotated-org-admin-password' },
    brand: { email: TEST_ADMINS.brand.email, password: 'rotated-acme-admin-password' },
  },
};
/** A key an operator made beside the demo ones: rotation must not touch it. */
const OWN_KEY = { id: 'key_operator_own', secret: 'wqk_operatorOwnKey0000000000000000000000000000' };

async function brandsStatus(secret: string): Promise<number> {
  const res = await SELF.fetch('http://api.test/v1/data/brands', { headers: { authorization: `Bearer ${secret}` } });
  await res.body?.cancel();
  return res.status;
}

async function signInStatus(email: string, password: string): Promise<number> {
  const browser = new TestBrowser('203.0.113.201');
  const csrf = inputValue(await (await browser.get('/admin/login')).text(), 'csrf');
  const res = await browser.post('/admin/login', { csrf, email, password });
  await res.body?.cancel();
  return res.status;
}

/** Applies a seed and returns what its rotating UPDATEs reported, as npm run dev reads it. */
async function applySeed(input: DemoSeedInput): Promise<{ rotated: string; revoked_at: number | null }[]> {
  const results = await env.DB.batch((await buildDemoSeed(input)).map((s) => env.DB.prepare(s)));
  return results
    .flatMap((r) => r.results)
    .flatMap((row) => {
      if (typeof row !== 'object' || row === null || !('rotated' in row) || typeof row.rotated !== 'string') return [];
      const revoked = 'revoked_at' in row && typeof row.revoked_at === 'number' ? row.revoked_at : null;
      return [{ rotated: row.rotated, revoked_at: revoked }];
    });
}

async function apiKeyRows(): Promise<Record<string, unknown>[]> {
  return (await env.DB.prepare('SELECT * FROM api_keys ORDER BY id').all<Record<string, unknown>>()).results;
}

beforeAll(async () => {
  await seedDemo();
  await env.DB.prepare("INSERT INTO api_keys (id, name, prefix, secret_hash, org_id, created_at) VALUES (?, 'mine', ?, ?, 'org_demo', ?)")
    .bind(OWN_KEY.id, OWN_KEY.secret.slice(0, 12), await sha256Hex(OWN_KEY.secret), Date.now())
    .run();
  // What an operator changed on demo rows: a name, a revocation, a sign-in lock.
  await env.DB.prepare("UPDATE api_keys SET name = 'renamed brand key' WHERE id = ?").bind(DEMO_KEY_IDS.brand).run();
  await env.DB.prepare('UPDATE api_keys SET revoked_at = 1 WHERE id = ?').bind(DEMO_KEY_IDS.other).run();
  await env.DB.prepare('UPDATE users SET failed_logins = 7, locked_until = ? WHERE id = ?')
    .bind(Date.now() + 3_600_000, DEMO_USER_IDS.brand)
    .run();
});

describe('demo seed with rotate', () => {
  it('without rotate, new secrets change nothing: the seed only adds what is missing', async () => {
    const before = await apiKeyRows();
    expect(await applySeed({ now: Date.now(), ...NEW, catalog: DEMO_CATALOG_FILES })).toEqual([]);
    expect(await apiKeyRows()).toEqual(before);
    expect(await brandsStatus(NEW.keys.org)).toBe(401);
    expect(await brandsStatus(TEST_KEYS.org)).toBe(200);
  });

  it('moves the demo keys and admins to the new secrets by id, and touches nothing else', async () => {
    const before = await apiKeyRows();
    const reported = await applySeed({ now: Date.now(), ...NEW, rotate: true, catalog: DEMO_CATALOG_FILES });
    expect(reported).toEqual([
      { rotated: DEMO_KEY_IDS.org, revoked_at: null },
      { rotated: DEMO_KEY_IDS.brand, revoked_at: null },
      { rotated: DEMO_KEY_IDS.other, revoked_at: 1 },
      { rotated: DEMO_USER_IDS.org, revoked_at: null },
      { rotated: DEMO_USER_IDS.brand, revoked_at: null },
    ]);
    // Only secret_hash and prefix of the three demo rows changed (read before any request marks a key used).
    const after = await apiKeyRows();
    const strip = (rows: Record<string, unknown>[]) => rows.map(({ secret_hash: _h, prefix: _p, ...rest }) => rest);
    expect(strip(after)).toEqual(strip(before));
    expect(after.find((r) => r.id === OWN_KEY.id)).toEqual(before.find((r) => r.id === OWN_KEY.id));
    expect(after.find((r) => r.id === DEMO_KEY_IDS.org)).toMatchObject({
      secret_hash: await sha256Hex(NEW.keys.org),
      prefix: NEW.keys.org.slice(0, 12),
    });

    expect(await brandsStatus(NEW.keys.org)).toBe(200);
    expect(await brandsStatus(NEW.keys.brand)).toBe(200);
    for (const old of Object.values(TEST_KEYS)) expect(await brandsStatus(old)).toBe(401);
    // A revoked demo key stays revoked under its new secret; the operator's own key still works.
    expect(await brandsStatus(NEW.keys.other)).toBe(401);
    expect(await brandsStatus(OWN_KEY.secret)).toBe(200);

    // The admins sign in with the new passwords (the lock is cleared, as `user set-password` does), not the old.
    expect(await signInStatus(TEST_ADMINS.brand.email, TEST_ADMINS.brand.password)).toBe(401);
    expect(await signInStatus(NEW.admins.brand.email, NEW.admins.brand.password)).toBe(303);
    expect(await signInStatus(NEW.admins.org.email, NEW.admins.org.password)).toBe(303);
  });
});
