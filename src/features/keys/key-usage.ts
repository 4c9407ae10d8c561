import { usageKey, type PrincipalLimits } from '../../auth/principal';
import type { Env } from '../../env';
import { ApiError, describeError } from '../../errors';
import type { Logger } from '../../lib/log';
import { peekUsage, type UsageSnapshot } from '../../usage/usage';
import { limitsOf } from '../../auth/key-settings';
import type { ManagedKey } from './keys';

/** What the keys list shows in a key's usage cell. */
export type KeyUsage =
  | { state: 'ok'; snapshot: UsageSnapshot }
  /** The key's usage object could not be read; the page renders anyway. */
  | { state: 'unavailable' }
  /** Past MAX_USAGE_LOOKUPS live keys on one page. */
  | { state: 'not-loaded' };

/**
 * Live keys whose usage one page view reads. Each is one Durable Object call, which counts against the request's
 * subrequest limit; an administrator with more live keys than this sees the first ones' usage only.
 */
export const MAX_USAGE_LOOKUPS = 100;

/**
 * The rolling-24 h usage of each live key, measured against the limits that apply to it at `now` (nothing is
 * counted). Revoked keys are left out. A usage object that fails or does not answer (peekUsage's own timeout) makes
 * that key `unavailable` and is logged; it never fails the page.
 */
export async function loadKeyUsage(
  env: Env,
  keys: ManagedKey[],
  defaults: PrincipalLimits,
  now: number,
  log: Logger,
): Promise<Map<string, KeyUsage>> {
  const live = keys.filter((k) => k.revokedAt === null);
  return loadUsage(
    env,
    live.map((k) => ({ kind: 'key' as const, id: k.id, limits: limitsOf(k.limits, defaults) })),
    now,
    log,
  );
}

/**
 * The same for any principals: keys, or assistant connections (`oauth` + grant id, under the default limits), by
 * id. At most MAX_USAGE_LOOKUPS are read; a failure makes that one `unavailable` and is logged.
 */
export async function loadUsage(
  env: Env,
  items: { kind: 'key' | 'oauth'; id: string; limits: PrincipalLimits }[],
  now: number,
  log: Logger,
): Promise<Map<string, KeyUsage>> {
  const entries = await Promise.all(
    items.map(async (p, i): Promise<[string, KeyUsage]> => {
      if (i >= MAX_USAGE_LOOKUPS) return [p.id, { state: 'not-loaded' }];
      try {
        return [p.id, { state: 'ok', snapshot: await peekUsage(env, usageKey(p), p.limits, now) }];
      } catch (err) {
        // peekUsage wraps the cause (RPC failure, timeout, refused budget) in USAGE_UNAVAILABLE; log the cause.
        const cause = err instanceof ApiError && err.internal !== undefined ? err.internal : err;
        log.warn(p.kind === 'key' ? 'key usage unavailable' : 'connection usage unavailable', {
          [p.kind === 'key' ? 'keyId' : 'grantId']: p.id,
          internal: describeError(cause),
        });
        return [p.id, { state: 'unavailable' }];
      }
    }),
  );
  return new Map(entries);
}
