import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env';

/**
 * One refresh of a grant at a time, and each refresh token exchanged at most once (OAuth 2.1 §4.3.1, OAuth 2.0
 * Security BCP §4.14.2). A Durable Object per grant (named by the grant id) holds the SHA-256 of every refresh
 * token the token endpoint has let through for that grant. Its methods run one at a time, so of any number of
 * concurrent requests presenting one token exactly one `claim` answers `first`, and only that one reaches the
 * OAuth library; every other is reuse, which revokes the grant.
 *
 * The winner's exchange may still be writing the grant when a loser revokes it, and the library's write would then
 * bring the grant back. So a loser marks the grant `reused`, and the winner's `settle`, after its exchange has
 * written, tells it to revoke again. A refused exchange (the library answered an error: expired grant, wrong
 * client) gives its claim back unless reuse was seen, so a client may retry a refresh that did not happen.
 *
 * Storage (per grant): `used:<hash>` for each token let through, `reused` once reuse was seen. An alarm deletes it
 * all RETAIN_MS after the grant's last refresh: by then the grant has expired (the provider's idle TTL), so no
 * token of it can be presented any more.
 */

/** The provider's `refreshTokenIdleTTL` (30 days) plus a day. */
export const RETAIN_MS = 31 * 24 * 3600_000;

export class RefreshTokenGate extends DurableObject<Env> {
  /** Whether `tokenHash` is presented for the first time; records it either way. */
  async claim(tokenHash: string, now: number): Promise<{ first: boolean }> {
    const key = `used:${tokenHash}`;
    if ((await this.ctx.storage.get(key)) !== undefined) {
      await this.ctx.storage.put('reused', now);
      return { first: false };
    }
    await this.ctx.storage.put(key, now);
    await this.ctx.storage.setAlarm(now + RETAIN_MS);
    return { first: true };
  }

  /**
   * The claimed exchange is over (`exchanged`: the library issued new tokens). Answers whether reuse was seen for
   * this grant, in which case the caller revokes the grant again, after its own exchange wrote it.
   */
  async settle(tokenHash: string, exchanged: boolean): Promise<{ reused: boolean }> {
    const reused = (await this.ctx.storage.get('reused')) !== undefined;
    if (!exchanged && !reused) await this.ctx.storage.delete(`used:${tokenHash}`);
    return { reused };
  }

  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}

function gate(env: Env, grantId: string): DurableObjectStub<RefreshTokenGate> {
  return env.REFRESH_GATE.get(env.REFRESH_GATE.idFromName(grantId));
}

export function claimRefreshToken(env: Env, grantId: string, tokenHash: string, now: number): Promise<{ first: boolean }> {
  return gate(env, grantId).claim(tokenHash, now);
}

export function settleRefreshToken(env: Env, grantId: string, tokenHash: string, exchanged: boolean): Promise<{ reused: boolean }> {
  return gate(env, grantId).settle(tokenHash, exchanged);
}
