import { sha256Hex } from '../lib/ids';

/**
 * Refresh-token reuse detection (OAuth 2.1 §4.3.1, OAuth 2.0 Security BCP §4.14.2). The library rotates refresh
 * tokens but keeps the rotated-out one valid until its replacement is used, so a stolen token keeps working and
 * evicts the legitimate client's. Every refresh token the token endpoint lets through is recorded by its grant's
 * RefreshTokenGate (src/oauth/refresh-gate.ts) before the library sees it, one request at a time per grant, so a
 * token is exchanged at most once whatever the concurrency; presenting again one the library has exchanged revokes
 * the whole grant (a token it never verified revokes nothing).
 *
 * Trade-off: a client whose refresh response was lost and which retries with the old token is disconnected too
 * (it has to be approved again). That is the behaviour the BCP asks for.
 */

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

/** What the gate records of a token: its SHA-256, never the token. */
export function refreshTokenHash(ref: RefreshTokenRef): Promise<string> {
  return sha256Hex(ref.token);
}
