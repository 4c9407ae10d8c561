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

export const verdictCache = {
  get: (key: string, now: number): CachedVerdict | undefined => cache.get(key, now, VERDICT_TTL_MS),
  set: (key: string, verdict: CachedVerdict, now: number): void => cache.set(key, verdict, now),
  clear: (): void => cache.clear(),
};
