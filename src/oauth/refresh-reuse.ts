import type { Env } from '../env';
import { sha256Hex } from '../lib/ids';

/**
 * Refresh-token reuse detection (OAuth 2.1 §4.3.1, OAuth 2.0 Security BCP §4.14.2). The library rotates refresh
 * tokens but keeps the rotated-out one valid until its replacement is used, so a stolen token keeps working and
 * evicts the legitimate client's. We remember every refresh token the token endpoint has rotated out, in OAUTH_KV
 * under `refresh-retired:<sha256(token)>` (value: the grant id), for as long as a grant can live; presenting one
 * again revokes the whole grant.
 *
 * Trade-off: a client whose refresh response was lost and which retries with the old token is disconnected too
 * (it has to be approved again). That is the behaviour the BCP asks for.
 */

/** A grant lives at most this long without a refresh (the provider's `refreshTokenIdleTTL`), plus a day. */
const RETIRED_TTL_SECONDS = 31 * 24 * 3600;

/** The grant a refresh token belongs to, from its `<userId>:<grantId>:<secret>` shape (the library's format). */
export interface RefreshTokenRef {
  token: string;
  userId: string;
  grantId: string;
}

export function refreshTokenRef(token: string | null | undefined): RefreshTokenRef | null {
  if (!token) return null;
  const parts = token.split(':');
  if (parts.length !== 3 || parts.some((p) => p === '')) return null;
  const [userId = '', grantId = ''] = parts;
  return { token, userId, grantId };
}

function retiredKey(hash: string): string {
  return `refresh-retired:${hash}`;
}

/** True when this refresh token was already exchanged once (it has been rotated out). */
export async function isRetired(env: Env, ref: RefreshTokenRef): Promise<boolean> {
  return (await env.OAUTH_KV.get(retiredKey(await sha256Hex(ref.token)))) !== null;
}

/** Records that a refresh succeeded with this token, so presenting it again is recognised as reuse. */
export async function retire(env: Env, ref: RefreshTokenRef): Promise<void> {
  await env.OAUTH_KV.put(retiredKey(await sha256Hex(ref.token)), ref.grantId, { expirationTtl: RETIRED_TTL_SECONDS });
}
