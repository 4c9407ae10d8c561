import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env';

/**
 * One refresh of a grant at a time, and each refresh token exchanged at most once (OAuth 2.1 §4.3.1, OAuth 2.0
 * Security BCP §4.14.2). A Durable Object per grant (named by the grant id the token string claims) holds the
 * SHA-256 of every refresh token the token endpoint has let through for that grant. Its methods run one at a time,
 * so of any number of concurrent requests presenting one token exactly one `claim` answers `first`, and only that
 * one reaches the OAuth library.
 *
 * Only a token the library has verified counts (docs/architecture.md, "Ownership"): the string names a user and a
 * grant, and those ids are not secret (other administrators see them in history links), so a made-up token for
 * someone's grant must change nothing. A claimed token is `pending` until its exchange is settled: `exchanged` when
 * the library issued new tokens for it, forgotten when the library refused it (an unknown secret, a wrong client,
 * an expired grant). Presenting a token again is reuse, which revokes the grant, only once it is `exchanged`; a
 * presentation while it is `pending` is refused (invalid_grant) and marked, and the winner's `settle` revokes the
 * grant only if its own exchange succeeded (its write may otherwise bring the revoked grant back).
 *
 * Storage (per grant): `used:<hash>` for each token let through ({ state, at }; a bare number, written before
 * states were kept, reads as `exchanged`), `reused:<hash>` once a pending token was presented again. An alarm deletes
 * it all RETAIN_MS after the grant's last refresh: by then the grant has expired (the provider's idle TTL), so no
 * token of it can be presented any more.
 */

/** The provider's `refreshTokenIdleTTL` (30 days) plus a day. */
export const RETAIN_MS = 31 * 24 * 3600_000;

/**
 * A `pending` claim older than this is an exchange that never settled (its request died): the next presentation
 * claims the token afresh. Far above any token exchange (one KV read and write).
 */
export const PENDING_STALE_MS = 60_000;

interface Claim {
  state: 'pending' | 'exchanged';
  at: number;
}

/** What `claim` answers: let through (`first`), reuse of a verified token (`reused`), or a concurrent presentation. */
export type ClaimVerdict = 'first' | 'reused' | 'concurrent';

export class RefreshTokenGate extends DurableObject<Env> {
  private async read(tokenHash: string): Promise<Claim | undefined> {
    const v = await this.ctx.storage.get<Claim | number>(`used:${tokenHash}`);
    return typeof v === 'number' ? { state: 'exchanged', at: v } : v;
  }

  /** Whether `tokenHash` may be exchanged now; a first presentation is recorded as pending. */
  async claim(tokenHash: string, now: number): Promise<{ verdict: ClaimVerdict }> {
    const seen = await this.read(tokenHash);
    if (seen?.state === 'exchanged') return { verdict: 'reused' };
    if (seen?.state === 'pending' && now - seen.at < PENDING_STALE_MS) {
      await this.ctx.storage.put(`reused:${tokenHash}`, now);
      return { verdict: 'concurrent' };
    }
    await this.ctx.storage.put(`used:${tokenHash}`, { state: 'pending', at: now } satisfies Claim);
    await this.ctx.storage.setAlarm(now + RETAIN_MS);
    return { verdict: 'first' };
  }

  /**
   * The claimed exchange is over (`exchanged`: the library verified the token and issued new ones). A refused one is
   * forgotten with its marks, so an unverified token leaves nothing behind. Answers whether the token was presented
   * again meanwhile, in which case the caller revokes the grant, after its own exchange wrote it.
   */
  async settle(tokenHash: string, exchanged: boolean, now: number): Promise<{ reused: boolean }> {
    const reused = (await this.ctx.storage.get(`reused:${tokenHash}`)) !== undefined;
    if (!exchanged) {
      await this.ctx.storage.delete([`used:${tokenHash}`, `reused:${tokenHash}`]);
      return { reused: false };
    }
    await this.ctx.storage.put(`used:${tokenHash}`, { state: 'exchanged', at: now } satisfies Claim);
    return { reused };
  }

  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}

function gate(env: Env, grantId: string): DurableObjectStub<RefreshTokenGate> {
  return env.REFRESH_GATE.get(env.REFRESH_GATE.idFromName(grantId));
}

export function claimRefreshToken(env: Env, grantId: string, tokenHash: string, now: number): Promise<{ verdict: ClaimVerdict }> {
  return gate(env, grantId).claim(tokenHash, now);
}

export function settleRefreshToken(
  env: Env,
  grantId: string,
  tokenHash: string,
  exchanged: boolean,
  now: number,
): Promise<{ reused: boolean }> {
  return gate(env, grantId).settle(tokenHash, exchanged, now);
}
