import type { Env } from '../env';
import { TtlCache } from '../lib/ttl-cache';

/**
 * "Last used" of an OAuth connection. The library does not track use, so the MCP handler records it in OAUTH_KV
 * under `grant-last-used:<grantId>` (value: ms since epoch), at most once a minute per grant per isolate so the hot
 * path stays one KV write per minute at worst. Readers see it to within that minute (and KV's propagation delay).
 */
const RESOLUTION_MS = 60_000;
/** Kept about as long as a grant can live without use (the refresh token's idle lifetime), plus a day. */
const MARKER_TTL_SECONDS = 31 * 24 * 3600;
const lastWrites = new TtlCache<true>(1000);

function markerKey(grantId: string): string {
  return `grant-last-used:${grantId}`;
}

/** The write to hand to `waitUntil`, or null when this grant's use was recorded less than a minute ago here. */
export function recordGrantUse(env: Env, grantId: string, now: number): Promise<void> | null {
  if (lastWrites.get(grantId, now, RESOLUTION_MS)) return null;
  lastWrites.set(grantId, true, now);
  return env.OAUTH_KV.put(markerKey(grantId), String(now), { expirationTtl: MARKER_TTL_SECONDS });
}

/** Last recorded use of a grant (ms since epoch), or null when none is known. */
export async function grantLastUsed(env: Env, grantId: string): Promise<number | null> {
  const raw = await env.OAUTH_KV.get(markerKey(grantId));
  const n = raw === null ? NaN : Number(raw);
  return Number.isSafeInteger(n) ? n : null;
}

/** Drops the marker with the grant, so a revoked connection leaves nothing behind. */
export async function forgetGrantUse(env: Env, grantId: string): Promise<void> {
  lastWrites.delete(grantId);
  await env.OAUTH_KV.delete(markerKey(grantId));
}
