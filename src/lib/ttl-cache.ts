/**
 * A bounded per-isolate cache whose entries expire `ttlMs` after they were stored. Clock injected (`now`),
 * so tests are deterministic. Map insertion order makes eviction of the oldest entry O(1).
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; at: number }>();

  constructor(private readonly maxEntries: number) {}

  get(key: string, now: number, ttlMs: number): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (now - e.at >= ttlMs || now < e.at) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, now: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, at: now });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
