import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/errors';
import { credentialFor, type ServiceAccount } from '../src/warehouse/credentials';
import { BIGQUERY_SCOPE, bearerTokenFor, jwtClaims } from '../src/warehouse/jwt';
import { b64urlDecode, jwtPart, newKeyPair } from './warehouse-fixtures';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

describe('jwtClaims (pure)', () => {
  it('iss = sub = client email, the BigQuery scope and no aud (AIP-4111, any endpoint), one hour at most', () => {
    expect(jwtClaims({ clientEmail: 'sa@p.iam.gserviceaccount.com' }, T0 + 999)).toEqual({
      iss: 'sa@p.iam.gserviceaccount.com',
      sub: 'sa@p.iam.gserviceaccount.com',
      scope: 'https://www.googleapis.com/auth/bigquery',
      iat: T0 / 1000,
      exp: T0 / 1000 + 3600,
    });
    expect(jwtClaims({ clientEmail: 'a@b' }, T0, 7200).exp - T0 / 1000).toBe(3600);
  });
});

describe('bearerTokenFor', () => {
  it('is an RS256 JWT with kid that verifies against the account public key', async () => {
    const { pem, publicKey } = await newKeyPair();
    const account: ServiceAccount = { clientEmail: 'signer@p.iam.gserviceaccount.com', privateKeyId: 'kid-123', privateKeyPem: pem };
    const token = await bearerTokenFor(account, T0);
    const [h, p, s] = token.split('.');
    expect(jwtPart(token, 0)).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'kid-123' });
    expect(jwtPart(token, 1)).toEqual({
      iss: account.clientEmail,
      sub: account.clientEmail,
      scope: BIGQUERY_SCOPE,
      iat: T0 / 1000,
      exp: T0 / 1000 + 3600,
    });
    const ok = await crypto.subtle.verify('RSASSA-PKCS1-v1_5', publicKey, b64urlDecode(s ?? ''), new TextEncoder().encode(`${h}.${p}`));
    expect(ok).toBe(true);
  });

  it('reuses the token until 5 minutes before expiry, then signs a new one', async () => {
    const { pem } = await newKeyPair();
    const account: ServiceAccount = { clientEmail: 'reuse@p.iam.gserviceaccount.com', privateKeyId: 'k1', privateKeyPem: pem };
    const first = await bearerTokenFor(account, T0);
    expect(await bearerTokenFor(account, T0 + 30 * 60_000)).toBe(first);
    expect(await bearerTokenFor(account, T0 + 54 * 60_000 + 59_000)).toBe(first);
    const renewed = await bearerTokenFor(account, T0 + 55 * 60_000);
    expect(renewed).not.toBe(first);
    expect(jwtPart(renewed, 1)).toMatchObject({ iat: T0 / 1000 + 55 * 60, exp: T0 / 1000 + 55 * 60 + 3600 });
    // A clock that moves back before the cached token's iat gets a fresh token too.
    const earlier = await bearerTokenFor(account, T0);
    expect(jwtPart(earlier, 1)).toMatchObject({ iat: T0 / 1000 });
  });

  it('never shares a token between two keys with the same email and key id', async () => {
    const a = await newKeyPair();
    const b = await newKeyPair();
    const ta = await bearerTokenFor({ clientEmail: 'same@p', privateKeyId: 'same', privateKeyPem: a.pem }, T0);
    const tb = await bearerTokenFor({ clientEmail: 'same@p', privateKeyId: 'same', privateKeyPem: b.pem }, T0);
    expect(ta).not.toBe(tb);
  });
});

describe('credentialFor', () => {
  const sa = (email: string, pem: string) =>
    JSON.stringify({ type: 'service_account', client_email: email, private_key_id: 'k', private_key: pem, project_id: 'p' });

  it('reads the default account from the secret injected by the test setup', async () => {
    const account = await credentialFor(env, 'brand_acme');
    expect(account.clientEmail).toMatch(/@/);
    expect(account.privateKeyPem).toContain('BEGIN PRIVATE KEY');
  });

  it("uses a brand's own account when GCP_SERVICE_ACCOUNTS_BY_BRAND has one, the default otherwise", async () => {
    const { pem } = await newKeyPair();
    const byBrand = JSON.stringify({ brand_acme: JSON.parse(sa('acme-reader@p.iam.gserviceaccount.com', pem)) });
    const cfg = { ...env, GCP_SERVICE_ACCOUNT_JSON: sa('default@p.iam.gserviceaccount.com', pem), GCP_SERVICE_ACCOUNTS_BY_BRAND: byBrand };
    expect((await credentialFor(cfg, 'brand_acme')).clientEmail).toBe('acme-reader@p.iam.gserviceaccount.com');
    expect((await credentialFor(cfg, 'brand_globex')).clientEmail).toBe('default@p.iam.gserviceaccount.com');
  });

  it.each([
    ['missing everywhere', {}],
    ['not JSON', { GCP_SERVICE_ACCOUNT_JSON: '{"private_key": "-----BEGIN PRIVATE KEY-----\nsecret' }],
    ['not a service account', { GCP_SERVICE_ACCOUNT_JSON: JSON.stringify({ client_email: 'x@y' }) }],
    ['a malformed brand map', { GCP_SERVICE_ACCOUNTS_BY_BRAND: JSON.stringify({ brand_acme: 'nope' }) }],
  ])('fails closed with 500 INTERNAL when %s, without echoing key material', async (_label, cfg) => {
    let caught: unknown;
    try {
      await credentialFor({ ...env, GCP_SERVICE_ACCOUNT_JSON: undefined, ...cfg }, 'brand_acme');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ApiError);
    expect(caught).toMatchObject({ code: 'INTERNAL', status: 500 });
    expect(JSON.stringify(caught instanceof ApiError ? [caught.message, caught.internal] : null)).not.toContain('secret');
  });
});
