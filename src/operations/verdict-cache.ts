/**
 * Per-isolate cache of passed dry-run verdicts, keyed by (dataset, SQL hash), holding the byte estimate.
 * A repeated query then costs one warehouse round trip, not two. Only passes are cached; BigQuery still
 * enforces the byte ceiling through maximumBytesBilled on every run.
 */
export const VERDICT_TTL_MS = 5 * 60_000;
const MAX_ENTRIES = 2_000;

class VerdictCache {
  private readonly entries = new Map<string, { estimate: number; at: number }>();

  get(key: string, now: number): number | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (now - e.at > VERDICT_TTL_MS) {
      this.entries.delete(key);
      return undefined;
    }
    return e.estimate;
  }

  set(key: string, estimate: number, now: number): void {
    this.entries.delete(key);
    this.entries.set(key, { estimate, at: now });
    // Map keeps insertion order: drop the oldest beyond the bound.
    while (this.entries.size > MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  clear(): void {
    this.entries.clear();
  }
}

export const verdictCache = new VerdictCache();
