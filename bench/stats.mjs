// Shared by every benchmark module: latency percentiles over raw samples (milliseconds).

/**
 * @param {number[]} samples
 * @returns {{ n: number; p50: number; p99: number; mean: number; max: number }}
 */
export function percentiles(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
  return { n: s.length, p50: at(0.5), p99: at(0.99), mean: s.reduce((a, b) => a + b, 0) / s.length, max: s[s.length - 1] };
}
