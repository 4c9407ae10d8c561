import type { ServiceAccount } from './credentials';
import { TtlCache } from '../lib/ttl-cache';

/**
 * Self-signed service-account JWTs, which BigQuery accepts directly as bearer tokens (no OAuth token exchange,
 * so no extra round trip). Signed with WebCrypto (RS256 over the PKCS#8 key), so this runs in workerd and Node.
 * Tokens are never logged.
 */

/**
 * The OAuth scope a self-signed JWT names instead of an audience (AIP-4111's scope form,
 * https://google.aip.dev/auth/4111): an `aud` must name the very endpoint called
 * (`https://bigquery.googleapis.com/`), so it breaks when `BIGQUERY_API_BASE` points at a regional endpoint; a scope
 * holds for every endpoint of the API. BigQuery's own scope, narrower than `cloud-platform`. AIP-4111: never both.
 */
export const BIGQUERY_SCOPE = 'https://www.googleapis.com/auth/bigquery';
/** Google accepts self-signed JWTs for at most an hour. */
export const TOKEN_LIFETIME_SECONDS = 3600;
/** A cached token is replaced this long before it expires, so one never expires in flight. */
export const REFRESH_MARGIN_SECONDS = 300;

export interface JwtClaims {
  iss: string;
  sub: string;
  scope: string;
  iat: number;
  exp: number;
}

/** Pure: the claims for `account` at `nowMs`. */
export function jwtClaims(
  account: Pick<ServiceAccount, 'clientEmail'>,
  nowMs: number,
  lifetimeSeconds = TOKEN_LIFETIME_SECONDS,
): JwtClaims {
  const iat = Math.floor(nowMs / 1000);
  return {
    iss: account.clientEmail,
    sub: account.clientEmail,
    scope: BIGQUERY_SCOPE,
    iat,
    exp: iat + Math.min(lifetimeSeconds, TOKEN_LIFETIME_SECONDS),
  };
}

export function base64UrlEncode(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]!);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const encoder = new TextEncoder();

/** PKCS#8 PEM -> DER bytes (the body between the BEGIN/END lines, base64). */
export function pemToDer(pem: string): Uint8Array {
  const body = pem
    .replace(/-----BEGIN PRIVATE KEY-----/, '')
    .replace(/-----END PRIVATE KEY-----/, '')
    .replace(/\s+/g, '');
  const bin = atob(body);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function importSigningKey(pem: string): Promise<CryptoKey> {
  return crypto.subtle.importKey('pkcs8', pemToDer(pem), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign']);
}

/** Signs header.claims with RS256; `kid` names the key so Google can pick the matching public certificate. */
export async function signJwt(key: CryptoKey, kid: string, claims: JwtClaims): Promise<string> {
  const header = base64UrlEncode(encoder.encode(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid })));
  const payload = base64UrlEncode(encoder.encode(JSON.stringify(claims)));
  const input = `${header}.${payload}`;
  const sig = await crypto.subtle.sign('RSASSA-PKCS1-v1_5', key, encoder.encode(input));
  return `${input}.${base64UrlEncode(new Uint8Array(sig))}`;
}

interface CachedToken {
  token: string;
  /** Seconds since the epoch after which a fresh token is signed. */
  refreshAt: number;
}

/**
 * Per isolate, per credential: the imported key (import is the slow part) and the current token. Keyed by the
 * key material itself, so two accounts sharing an email or key id never share a token.
 */
/** Deployments have a handful of accounts; the bound only guards against a runaway caller. */
const keys = new TtlCache<Promise<CryptoKey>>(256);
const tokens = new TtlCache<CachedToken>(256);

function cacheKey(account: ServiceAccount): string {
  return `${account.clientEmail}\n${account.privateKeyId}\n${account.privateKeyPem}`;
}

function signingKey(account: ServiceAccount, id: string): Promise<CryptoKey> {
  // A key that fails to import is not kept: it must not poison the cache for the next request.
  return keys.load(id, 0, Infinity, () => importSigningKey(account.privateKeyPem));
}

/** The bearer token for `account` at `nowMs`: the cached one until ~5 minutes before it expires, then a new one. */
export async function bearerTokenFor(account: ServiceAccount, nowMs: number): Promise<string> {
  const id = cacheKey(account);
  const nowSec = Math.floor(nowMs / 1000);
  const hit = tokens.get(id, nowMs);
  // `iat` in the future (a clock moved back) also re-signs: the cached token would not be valid yet.
  if (hit && nowSec < hit.refreshAt && nowSec >= hit.refreshAt - (TOKEN_LIFETIME_SECONDS - REFRESH_MARGIN_SECONDS)) {
    return hit.token;
  }
  const claims = jwtClaims(account, nowMs);
  const token = await signJwt(await signingKey(account, id), account.privateKeyId, claims);
  tokens.set(id, { token, refreshAt: claims.exp - REFRESH_MARGIN_SECONDS }, nowMs);
  return token;
}
