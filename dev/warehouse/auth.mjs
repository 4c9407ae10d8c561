// Verifies the bearer token the Worker sends: a self-signed service-account JWT (RS256), which BigQuery
// accepts directly without an OAuth token exchange, in either AIP-4111 form (`aud` or `scope`). Pure: takes `nowSeconds`, does no I/O.
import { createPublicKey, verify } from 'node:crypto';

export const BIGQUERY_AUDIENCE = 'https://bigquery.googleapis.com/';
/** OAuth scopes that cover BigQuery's REST API, any of which a scope-form self-signed JWT may carry. */
const BIGQUERY_SCOPES = ['https://www.googleapis.com/auth/bigquery', 'https://www.googleapis.com/auth/cloud-platform'];
/** Longest lifetime Google accepts for a self-signed JWT. */
const MAX_LIFETIME_SECONDS = 3600;
/** Tolerated clock skew for `iat` in the future, as Google's token verifiers allow. */
const CLOCK_SKEW_SECONDS = 30;

/**
 * @typedef {{ clientEmail: string, publicKeyPem: string, keyId?: string, datasets?: string[] }} TrustedAccount
 * @typedef {{ ok: true, account: TrustedAccount, claims: Record<string, unknown>, missing?: undefined, why?: undefined }
 *   | { ok: false, missing: boolean, why: string, account?: undefined, claims?: undefined }} AuthResult
 */

/**
 * @param {string | undefined} authorization the raw Authorization header
 * @param {TrustedAccount[]} accounts
 * @param {number} nowSeconds
 * @returns {AuthResult}
 */
export function verifyBearer(authorization, accounts, nowSeconds) {
  if (!authorization) return fail(true, 'no Authorization header');
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!m) return fail(true, 'Authorization is not a Bearer token');
  const parts = m[1].split('.');
  if (parts.length !== 3) return fail(false, 'token is not a JWT');
  const header = decodeJson(parts[0]);
  const claims = decodeJson(parts[1]);
  if (!header || !claims) return fail(false, 'JWT header or claims are not base64url JSON');
  if (header.alg !== 'RS256') return fail(false, `alg must be RS256, got ${String(header.alg)}`);
  if (typeof header.kid !== 'string' || header.kid === '') return fail(false, 'JWT header has no kid');
  if (typeof claims.iss !== 'string') return fail(false, 'iss missing');
  const account = accounts.find((a) => a.clientEmail === claims.iss);
  if (!account) return fail(false, `unknown service account ${claims.iss}`);
  if (account.keyId && account.keyId !== header.kid) return fail(false, 'kid does not name the service account key');
  const signature = Buffer.from(parts[2], 'base64url');
  const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
  let good = false;
  try {
    good = verify('RSA-SHA256', signed, createPublicKey(account.publicKeyPem), signature);
  } catch {
    good = false;
  }
  if (!good) return fail(false, 'bad signature');
  if (claims.sub !== claims.iss) return fail(false, 'sub must equal iss');
  // AIP-4111 (https://google.aip.dev/auth/4111): a self-signed JWT names either its audience (the API's root) or
  // OAuth scopes in a space-separated `scope` claim, and "must not specify scope and audience at the same time".
  if (claims.scope !== undefined && claims.aud !== undefined) return fail(false, 'a self-signed JWT names aud or scope, not both');
  if (claims.scope !== undefined) {
    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
    if (!scopes.some((x) => BIGQUERY_SCOPES.includes(x))) return fail(false, `scope must include one of ${BIGQUERY_SCOPES.join(', ')}`);
  } else if (claims.aud !== BIGQUERY_AUDIENCE) return fail(false, `aud must be ${BIGQUERY_AUDIENCE} (or a scope claim instead)`);
  if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number') return fail(false, 'iat and exp must be numbers');
  if (claims.exp - claims.iat > MAX_LIFETIME_SECONDS) return fail(false, 'token lifetime exceeds one hour');
  if (claims.iat > nowSeconds + CLOCK_SKEW_SECONDS) return fail(false, 'token issued in the future');
  if (claims.exp <= nowSeconds) return fail(false, 'token expired');
  return { ok: true, account, claims };
}

/** @returns {Record<string, unknown> | null} */
function decodeJson(segment) {
  try {
    const v = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

/** @returns {AuthResult} */
function fail(missing, why) {
  return { ok: false, missing, why };
}
