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

/**
 * Runs `fn` n times one after another and returns the percentiles of the durations (ms).
 * @param {number} n
 * @param {() => Promise<unknown>} fn
 */
export async function timeSequential(n, fn) {
  const { performance } = await import('node:perf_hooks');
  const samples = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  return percentiles(samples);
}

/**
 * Runs a component benchmark module's `run()` when that module is the script Node was started with
 * (`node bench/usage.mjs --quick --runs 200`), printing its table rows and then its figures as JSON.
 * @param {string} moduleUrl the module's `import.meta.url`
 * @param {(opts: { quick: boolean; runs?: number }) => Promise<{ rows: unknown[][] }>} run
 */
export async function runIfMain(moduleUrl, run) {
  const { pathToFileURL } = await import('node:url');
  if (moduleUrl !== pathToFileURL(process.argv[1] ?? '').href) return;
  const argv = process.argv.slice(2);
  const runsArg = argv.indexOf('--runs');
  const { rows, ...figures } = await run({ quick: argv.includes('--quick'), runs: runsArg >= 0 ? Number(argv[runsArg + 1]) : undefined });
  for (const r of rows) console.log(r.join('  '));
  console.log(JSON.stringify(figures, null, 2));
}
