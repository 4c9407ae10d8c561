#!/usr/bin/env node
// Where an MCP call's time goes, and two builds compared under the same load. Each bundle directory given (built
// with `wrangler deploy --dry-run --outdir <dir>`; `npm run bench` leaves one in bench/out/bundle) runs in its own
// workerd, all on one local warehouse. Rounds of `GET /v1/data/brands` and `tools/call list_brands`, and of
// `POST /v1/data/query` and `tools/call run_query` (same SQL), MCP in both eras, are interleaved across the
// bundles, so a change of machine load hits every build alike. Prints p50 per bundle and its ratio to the same
// bundle's REST twin. `--profile` also takes a V8 CPU profile of the first bundle per list_brands kind (written to
// bench/out/<kind>.cpuprofile, loadable in Chrome DevTools) and prints the functions with the most self time;
// sampling inflates native calls (abort, Response), so the p50s are what to compare.
// Usage: node bench/mcp-overhead.mjs [--profile] [--runs n] <bundleDir> [<bundleDir> ...]
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT } from '../scripts/lib/import-ts.mjs';
import { mcp, rest, SQL } from './mcp.mjs';
import { startStack } from './stack.mjs';
import { percentiles } from './stats.mjs';
import { inspector, selfTimes } from './profile.mjs';

const args = process.argv.slice(2);
const PROFILE = args.includes('--profile');
const runsAt = args.indexOf('--runs');
const RUNS = runsAt >= 0 ? Number(args[runsAt + 1]) : 600;
const bundles = args.filter((a, i) => !a.startsWith('--') && !(runsAt >= 0 && i === runsAt + 1));
if (bundles.length === 0) bundles.push(join(ROOT, 'bench', 'out', 'bundle'));
const ROUND = 20;
const INSPECTOR_PORT = 9229 + 1000 + Math.floor(Math.random() * 1000);

const QUERY = { sql: SQL, brandId: 'brand_globex' };
/** Each MCP kind's REST twin: the first kind of its group. */
const kinds = {
  rest: (s) => rest(s.url, s.keys.org, '/v1/data/brands'),
  modern: (s) => mcp(s.url, s.keys.org, '2026-07-28', 'tools/call', { name: 'list_brands', arguments: {} }),
  legacy: (s) => mcp(s.url, s.keys.org, '2025-11-25', 'tools/call', { name: 'list_brands', arguments: {} }),
  'rest query': (s) => rest(s.url, s.keys.org, '/v1/data/query', QUERY),
  'modern run_query': (s) => mcp(s.url, s.keys.org, '2026-07-28', 'tools/call', { name: 'run_query', arguments: QUERY }),
  'legacy run_query': (s) => mcp(s.url, s.keys.org, '2025-11-25', 'tools/call', { name: 'run_query', arguments: QUERY }),
};
const twin = (kind) => (kind.includes('run_query') || kind === 'rest query' ? 'rest query' : 'rest');

const stacks = [];
try {
  for (const [i, bundleDir] of bundles.entries()) {
    const shared = stacks[0] ? { warehouse: stacks[0].warehouse, sa: stacks[0].sa } : {};
    stacks.push(
      await startStack({ bundleDir, name: `bench${i}`, ...(PROFILE && i === 0 ? { inspectorPort: INSPECTOR_PORT } : {}), ...shared }),
    );
  }
  // Warm-up: JIT, the key and catalog caches of every isolate.
  for (const s of stacks) for (const call of Object.values(kinds)) for (let i = 0; i < 20; i++) await call(s);

  /** @type {Record<string, number[]>[]} */
  const samples = stacks.map(() => Object.fromEntries(Object.keys(kinds).map((k) => [k, []])));
  for (let done = 0; done < RUNS; done += ROUND) {
    for (const [i, s] of stacks.entries()) {
      for (const [kind, call] of Object.entries(kinds)) {
        for (let j = 0; j < ROUND; j++) {
          const t = performance.now();
          await call(s);
          samples[i][kind].push(performance.now() - t);
        }
      }
    }
  }
  for (const [i, bundleDir] of bundles.entries()) {
    const p50 = Object.fromEntries(Object.entries(samples[i]).map(([k, v]) => [k, percentiles(v).p50]));
    console.log(`${bundleDir} (${samples[i].rest.length} runs each, interleaved)`);
    for (const [kind, v] of Object.entries(p50))
      console.log(`  ${kind.padEnd(16)} p50 ${v.toFixed(2)} ms  ${(v / p50[twin(kind)]).toFixed(2)}x REST p50`);
  }

  if (PROFILE) {
    const cdp = await inspector(INSPECTOR_PORT);
    await mkdir(join(ROOT, 'bench', 'out'), { recursive: true });
    for (const [kind, call] of Object.entries(kinds).slice(0, 3)) {
      await cdp.send('Profiler.start');
      for (let j = 0; j < RUNS; j++) await call(stacks[0]);
      const { result } = await cdp.send('Profiler.stop');
      await writeFile(join(ROOT, 'bench', 'out', `${kind}.cpuprofile`), JSON.stringify(result.profile));
      const { totalMs, top } = selfTimes(result.profile, RUNS);
      console.log(`\nprofile ${kind}: ${totalMs.toFixed(3)} ms of isolate CPU per call (profiler on); most self time, µs per call:`);
      for (const [fn, us] of top) console.log(`  ${us.toFixed(0).padStart(5)}  ${fn}`);
    }
    cdp.close();
  }
} finally {
  // The first stack owns the shared warehouse: close it last.
  for (const s of stacks.reverse()) await s.close();
}
