import type { Env } from '../env';
import { ApiError } from '../errors';
import { requestSource } from './source';

/**
 * Per-source rate limits of the endpoints anyone on the internet can call without credentials: dynamic client
 * registration (each one writes KV), the token endpoint, and the sign-in pages (each password check costs 100,000
 * PBKDF2 iterations). Counted by Cloudflare's Rate Limiting binding (`[[ratelimits]]` in wrangler.toml; simulated
 * in memory by wrangler dev and the vitest pool), keyed by the source of CF-Connecting-IP (an IPv6 /64 counts as
 * one). The binding counts per Cloudflare location and is eventually consistent: a bound on floods, not an exact
 * quota; the exact per-account and per-source sign-in throttles in D1 (src/web/sign-in.ts) stay behind it.
 *
 * A request without CF-Connecting-IP, or from a loopback address, is not limited: Cloudflare sets the header on
 * every request it delivers and never to a loopback address, so those are local runs (`npm run dev`, tests)
 * calling themselves.
 */

/** Which limiter guards a path, and the key prefix it counts under; null for paths without a limit of their own. */
export function publicLimitFor(env: Env, pathname: string): { limiter: RateLimit; name: string } | null {
  const path = pathname.replace(/\/$/, '');
  if (path === '/oauth/register') return { limiter: env.REGISTER_LIMITER, name: 'register' };
  if (path === '/oauth/token') return { limiter: env.TOKEN_LIMITER, name: 'token' };
  if (path === '/authorize' || path === '/admin/login') return { limiter: env.SIGN_IN_LIMITER, name: 'sign-in' };
  return null;
}

/** The binding's window (`period` in wrangler.toml, 60 s for all three): the longest a refused source waits. */
export const PUBLIC_LIMIT_PERIOD_SECONDS = 60;

function isLoopback(ip: string): boolean {
  return ip === '::1' || ip.startsWith('127.') || ip.toLowerCase().startsWith('::ffff:127.');
}

/**
 * 429 RATE_LIMITED with Retry-After when the request's source is over its endpoint's limit; null to go on. A
 * limiter that fails lets the request through (logged by the caller): these limits shed floods, and the endpoints
 * behind them keep their own checks.
 */
export async function checkPublicLimit(env: Env, request: Request, pathname: string): Promise<ApiError | null> {
  const limit = publicLimitFor(env, pathname);
  const ip = request.headers.get('cf-connecting-ip');
  if (limit === null || ip === null || ip === '' || isLoopback(ip)) return null;
  const { success } = await limit.limiter.limit({ key: `${limit.name}:${requestSource(ip)}` });
  if (success) return null;
  return new ApiError(
    'RATE_LIMITED',
    `too many requests to this endpoint from your network; retry after ${PUBLIC_LIMIT_PERIOD_SECONDS} seconds`,
    {
      details: { limit: limit.name, retryAfterSeconds: PUBLIC_LIMIT_PERIOD_SECONDS },
      headers: { 'Retry-After': String(PUBLIC_LIMIT_PERIOD_SECONDS) },
    },
  );
}
