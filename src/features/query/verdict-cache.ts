import type { Config } from '../../env';
import { TtlCache } from '../../lib/ttl-cache';

/** What a passed dry run left to remember: its byte estimate and how many tables it read (for the reservation). */
export interface CachedVerdict {
  estimate: number;
  tables: number;
}

/**
 * Per-isolate cache of passed dry-run verdicts, keyed by (dataset, SQL hash), holding the byte estimate.
 * A repeated query then costs one warehouse round trip, not two. Only passes are cached; the parser gate runs
 * on every request, and BigQuery still enforces the byte ceiling through maximumBytesBilled on every run.
 */
export const VERDICT_TTL_MS = 5 * 60_000;

const cache = new TtlCache<CachedVerdict>(2_000);

/** The cache under the isolate's bounds (VERDICT_CACHE_MAX_ENTRIES, CACHE_MAX_BYTES). */
const bounded = (config: Config): TtlCache<CachedVerdict> =>
  cache.bound({ maxEntries: config.VERDICT_CACHE_MAX_ENTRIES, maxBytes: config.CACHE_MAX_BYTES });

export const verdictCache = {
  get: (config: Config, key: string, now: number): CachedVerdict | undefined => bounded(config).get(key, now, VERDICT_TTL_MS),
  set: (config: Config, key: string, verdict: CachedVerdict, now: number): void => bounded(config).set(key, verdict, now),
  size: (): number => cache.size,
  clear: (): void => cache.clear(),
};
