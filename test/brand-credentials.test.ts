// The Worker's reading of per-brand credentials sealed in D1: which account wins, rotation with the previous
// secret, and failing closed (never the default account) when a stored row does not open.
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../src/errors';
import { seal } from '../src/warehouse/credential-seal';
import { credentialFor } from '../src/warehouse/credentials';
import { newKeyPair } from './warehouse-fixtures';

const KEY_A = 'a'.repeat(16) + '0123456789abcdef0123456789abcdef';
const KEY_B = 'b'.repeat(16) + '0123456789abcdef0123456789abcdef';
let pem = '';

const sa = (email: string) => JSON.stringify({ type: 'service_account', client_email: email, private_key_id: 'kid-1', private_key: pem });

async function store(brandId: string, secret: string, email: string, sealFor = brandId): Promise<void> {
  const s = await seal(secret, sealFor, sa(email));
  await env.DB.prepare(
    `INSERT INTO brand_credentials (brand_id, client_email, private_key_id, key_id, iv, ciphertext, updated_at) VALUES (?, ?, 'kid-1', ?, ?, ?, 0)
     ON CONFLICT (brand_id) DO UPDATE SET key_id = excluded.key_id, iv = excluded.iv, ciphertext = excluded.ciphertext`,
  )
    .bind(brandId, email, s.keyId, s.iv, s.ciphertext)
    .run();
}

async function failure(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

beforeAll(async () => {
  pem = (await newKeyPair()).pem;
  await env.DB.prepare("INSERT INTO organizations (id, name, created_at) VALUES ('org_c', 'C', 0)").run();
  for (const id of ['brand_c1', 'brand_c2', 'brand_c3']) {
    await env.DB.prepare("INSERT INTO brands (id, org_id, name, created_at) VALUES (?, 'org_c', ?, 0)").bind(id, id).run();
  }
});

describe('credentialFor with brand_credentials', () => {
  it('a stored row wins over the by-brand secret and the default; brands without one fall back', async () => {
    await store('brand_c1', KEY_A, 'c1-stored@p.iam.gserviceaccount.com');
    const cfg = {
      ...env,
      CREDENTIALS_KEY: KEY_A,
      GCP_SERVICE_ACCOUNTS_BY_BRAND: JSON.stringify({ brand_c1: JSON.parse(sa('c1-secret@p')), brand_c2: JSON.parse(sa('c2-secret@p')) }),
    };
    expect((await credentialFor(cfg, 'brand_c1')).clientEmail).toBe('c1-stored@p.iam.gserviceaccount.com');
    expect((await credentialFor(cfg, 'brand_c2')).clientEmail).toBe('c2-secret@p');
    expect((await credentialFor(cfg, 'brand_c3')).clientEmail).toBe((await credentialFor(env, 'brand_c3')).clientEmail);
  });

  it('opens rows sealed under CREDENTIALS_KEY_PREVIOUS during a rotation', async () => {
    await store('brand_c2', KEY_A, 'c2-old@p');
    expect((await credentialFor({ ...env, CREDENTIALS_KEY: KEY_B, CREDENTIALS_KEY_PREVIOUS: KEY_A }, 'brand_c2')).clientEmail).toBe(
      'c2-old@p',
    );
  });

  it('fails closed with 500 INTERNAL, not the default account, when a stored row does not open', async () => {
    await store('brand_c3', KEY_A, 'c3@p');
    const noKey = await failure(credentialFor({ ...env, CREDENTIALS_KEY: undefined }, 'brand_c3'));
    expect(noKey).toMatchObject({ code: 'INTERNAL', status: 500 });
    expect(noKey.internal).toContain('neither CREDENTIALS_KEY nor CREDENTIALS_KEY_PREVIOUS');
    const wrongKey = await failure(credentialFor({ ...env, CREDENTIALS_KEY: KEY_B }, 'brand_c3'));
    expect(wrongKey.internal).toContain('sealed under key');
    // A row sealed for another brand (copied across) does not open.
    await store('brand_c3', KEY_A, 'c3@p', 'brand_c1');
    const swapped = await failure(credentialFor({ ...env, CREDENTIALS_KEY: KEY_A }, 'brand_c3'));
    expect(swapped.internal).toContain('sealed for another brand');
    expect(JSON.stringify([swapped.message, swapped.internal, noKey.internal])).not.toContain('PRIVATE KEY');
  });
});
