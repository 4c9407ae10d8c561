/**
 * The one bounded per-isolate cache: least recently used first out, bounded by entries and by approximate bytes
 * (keys and values, `approxBytes`), with an optional time to live per read. Every module-level cache in the Worker is
 * one of these, so a long run with many distinct keys (SQL texts, API keys, tables) holds at most the bounds.
 * Clock injected (`now`), so tests are deterministic. Map insertion order is the recency order: a hit moves its
 * entry to the end, eviction takes the first.
 */

/** Default byte bound of a cache whose owner does not pass one (the configurable caches take `CACHE_MAX_BYTES`). */
export const DEFAULT_CACHE_MAX_BYTES = 4 * 1024 * 1024;

export interface CacheBounds {
  maxEntries: number;
  maxBytes: number;
}

interface Entry<V> {
  value: V;
  at: number;
  bytes: number;
}

export class TtlCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private total = 0;
  private maxEntries: number;
  private maxBytes: number;

  constructor(maxEntries: number, maxBytes: number = DEFAULT_CACHE_MAX_BYTES) {
    this.maxEntries = maxEntries;
    this.maxBytes = maxBytes;
  }

  /** Entries held. */
  get size(): number {
    return this.entries.size;
  }

  /** Approximate bytes held (keys and values). */
  get bytes(): number {
    return this.total;
  }

  /** Applies new bounds (the isolate's configuration) and evicts down to them. Returns the cache, for chaining. */
  bound(bounds: Partial<CacheBounds>): this {
    if (bounds.maxEntries !== undefined) this.maxEntries = bounds.maxEntries;
    if (bounds.maxBytes !== undefined) this.maxBytes = bounds.maxBytes;
    this.evict();
    return this;
  }

  /** The value stored under `key` if it is younger than `ttlMs` (no TTL when omitted); a hit becomes most recent. */
  get(key: string, now: number, ttlMs = Infinity): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (now - e.at >= ttlMs || now < e.at) {
      this.remove(key, e);
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value;
  }

  /**
   * Stores `value` as most recent, then evicts the least recently used entries beyond the bounds. A value larger
   * than the byte bound by itself is not kept. `bytes` overrides the estimate (e.g. for a value known to be small).
   */
  set(key: string, value: V, now: number, bytes: number = approxBytes(value)): void {
    const old = this.entries.get(key);
    if (old) this.remove(key, old);
    const e = { value, at: now, bytes: keyBytes(key) + bytes };
    if (e.bytes > this.maxBytes || this.maxEntries < 1) return;
    this.entries.set(key, e);
    this.total += e.bytes;
    this.evict();
  }

  /**
   * For a cache of promises: the pending or settled load of `key`, started once. A rejected load is dropped (the
   * next call loads again); a resolved one is re-measured by its value, so the byte bound counts what it holds.
   */
  load<T>(this: TtlCache<Promise<T>>, key: string, now: number, ttlMs: number, load: () => Promise<T>): Promise<T> {
    const hit = this.get(key, now, ttlMs);
    if (hit) return hit;
    const p = load();
    this.set(key, p, now, PENDING_BYTES);
    p.then(
      (value) => this.resize(key, p, approxBytes(value)),
      () => this.forget(key, p),
    );
    return p;
  }

  delete(key: string): void {
    const e = this.entries.get(key);
    if (e) this.remove(key, e);
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }

  /** Re-measures `key` if it still holds `value`, and evicts down to the bounds. */
  private resize(key: string, value: V, bytes: number): void {
    const e = this.entries.get(key);
    if (!e || e.value !== value) return;
    this.total += keyBytes(key) + bytes - e.bytes;
    e.bytes = keyBytes(key) + bytes;
    if (e.bytes > this.maxBytes) this.remove(key, e);
    this.evict();
  }

  /** Drops `key` if it still holds `value` (a newer value stored meanwhile stays). */
  private forget(key: string, value: V): void {
    const e = this.entries.get(key);
    if (e && e.value === value) this.remove(key, e);
  }

  private remove(key: string, e: Entry<V>): void {
    this.entries.delete(key);
    this.total -= e.bytes;
  }

  private evict(): void {
    for (const [key, e] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.total <= this.maxBytes) break;
      this.remove(key, e);
    }
  }
}

/** What a pending promise is counted as until it settles. */
const PENDING_BYTES = 64;
/** Per-entry bookkeeping (the map slot, the entry object), counted with every key. */
const ENTRY_OVERHEAD = 64;

function keyBytes(key: string): number {
  return ENTRY_OVERHEAD + 2 * key.length;
}

/**
 * An approximate size in bytes of a value as V8 holds it: strings two bytes a character, numbers eight, objects,
 * arrays and maps their members plus a fixed overhead; shared and cyclic references counted once; opaque objects
 * (CryptoKey, class instances without own fields) a fixed guess. Only ever used to bound caches, never to bill.
 */
export function approxBytes(value: unknown): number {
  const seen = new Set<object>();
  const stack: unknown[] = [value];
  let bytes = 0;
  while (stack.length > 0) {
    const v = stack.pop();
    switch (typeof v) {
      case 'string':
        bytes += 16 + 2 * v.length;
        continue;
      case 'number':
      case 'boolean':
      case 'undefined':
      case 'bigint':
      case 'symbol':
        bytes += 8;
        continue;
      case 'function':
        bytes += 64;
        continue;
    }
    if (v === null) {
      bytes += 8;
      continue;
    }
    const o = v as object;
    if (seen.has(o)) continue;
    seen.add(o);
    bytes += 32;
    if (o instanceof Map) {
      for (const [k, x] of o) stack.push(k, x);
    } else if (o instanceof Set) {
      for (const x of o) stack.push(x);
    } else if (ArrayBuffer.isView(o)) {
      bytes += o.byteLength;
    } else if (o instanceof ArrayBuffer) {
      bytes += o.byteLength;
    } else if (Array.isArray(o)) {
      for (const x of o) stack.push(x);
    } else if (!(o instanceof Promise)) {
      for (const [k, x] of Object.entries(o)) {
        bytes += 16 + 2 * k.length;
        stack.push(x);
      }
    }
  }
  return bytes;
}
