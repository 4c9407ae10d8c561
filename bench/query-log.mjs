#!/usr/bin/env node
// What one query_log row per run costs, and whether it limits a few hundred runs a second. The run path writes one
// D1 INSERT per run (after the response, in waitUntil). bench/query-log-worker.ts runs that same statement
// (insertQueryLog) in workerd (Miniflare) over a local D1 with the migrations applied, and measures:
//
// - per request: a no-op request against one that awaits the INSERT (sequential, paired), so the added time reads
//   as a ratio to the request itself;
// - inside the Worker, no HTTP: n single-row INSERTs back to back against the same rows in D1 batches of 50, so the
//   per-row cost of batched delivery (what a Queues consumer writing batches would pay) reads as a ratio;
// - under load: RATE inserting requests a second for a few seconds from Node (open loop, 20 in flight at most),
//   against the same rate of no-op requests; the achieved rate and p50 latency, and the database's busy share: rows
//   a second x the in-Worker per-row time. D1 runs one query at a time per database, so its throughput is 1 / query
//   duration (https://developers.cloudflare.com/d1/platform/limits/, "How much work can a single D1 database do?");
//   the busy share is the fraction of that single thread the log takes at this rate.
//
// Local D1 is SQLite in the same process: what it measures is the statement's own cost (the part that occupies the
// database), not the network round trip a deployed Worker waits for (which waitUntil keeps off the response).
// Storage on tmpfs (/dev/shm) when present, else the temp directory. Counts rows at the end: every request's row is
// there. `node bench/query-log.mjs [--quick]`, or `run()` from `npm run bench`.
import { Miniflare } from 'miniflare';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openD1 } from '../scripts/lib/d1.mjs';
import { bundleTs } from '../scripts/lib/import-ts.mjs';
import { applyMigrations } from '../scripts/lib/migrations.mjs';
import { percentiles, runIfMain } from './stats.mjs';

const RATE = 300;
const BATCH = 50;

function bundle() {
  return bundleTs({ entry: 'bench/query-log-worker.ts' }, { platform: 'neutral', external: ['cloudflare:*'] });
}

/** `rate` requests a second to `path` for `seconds`, at most `inFlight` at once; latency samples and the rate achieved. */
async function openLoop(call, path, rate, seconds, inFlight = 20) {
  const total = Math.round(rate * seconds);
  const samples = [];
  let active = 0;
  let dropped = 0;
  const start = performance.now();
  const pending = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (active >= inFlight) {
      dropped++;
      continue;
    }
    active++;
    const t = performance.now();
    pending.push(
      call(path).then(() => {
        samples.push(performance.now() - t);
        active--;
      }),
    );
  }
  await Promise.all(pending);
  const elapsed = (performance.now() - start) / 1000;
  return { sent: total - dropped, dropped, achievedPerSec: samples.length / elapsed, ...percentiles(samples) };
}

/**
 * @param {{ quick?: boolean }} [opts]
 */
export async function run(opts = {}) {
  const runs = opts.quick ? 200 : 1000;
  const seconds = opts.quick ? 2 : 5;
  const root = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const dir = mkdtempSync(join(root, 'query-log-bench-'));
  try {
    const db = await openD1({ persistTo: dir });
    await applyMigrations(db);
    const [[{ id }]] = await db.execute("SELECT 'ok' AS id");
    await db.close();
    if (id !== 'ok') throw new Error('could not prepare the bench database');
    const { unstable_readConfig } = await import('wrangler');
    const config = unstable_readConfig({ config: join(import.meta.dirname, '..', 'wrangler.toml') });
    const d1 = config.d1_databases[0];
    const mf = new Miniflare({
      modules: [{ type: 'ESModule', path: 'index.mjs', contents: await bundle() }],
      compatibilityDate: '2026-04-01',
      compatibilityFlags: ['nodejs_compat'],
      d1Databases: { DB: d1.preview_database_id ?? d1.database_id ?? d1.binding },
      d1Persist: join(dir, 'v3', 'd1'),
      host: '127.0.0.1',
      port: 0,
    });
    try {
      const base = await mf.ready;
      const call = async (path) => {
        const res = await fetch(new URL(path, base), { method: 'POST' });
        if (!res.ok) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
        return res.status === 204 ? null : res.json();
      };
      // Warm both paths, then paired sequential samples (alternating, so drift hits both alike).
      for (let i = 0; i < 50; i++) {
        await call('/noop');
        await call('/insert');
      }
      /** @type {{ noop: number[], insert: number[] }} */
      const samples = { noop: [], insert: [] };
      for (let i = 0; i < runs; i++) {
        /** @type {('noop' | 'insert')[]} */
        const order = i % 2 ? ['noop', 'insert'] : ['insert', 'noop'];
        for (const name of order) {
          const t = performance.now();
          await call(`/${name}`);
          samples[name].push(performance.now() - t);
        }
      }
      const { noop, insert } = samples;
      const seq = { noop: percentiles(noop), insert: percentiles(insert) };
      const single = await call(`/loop?n=${runs}&batch=1`);
      const batched = await call(`/loop?n=${runs}&batch=${BATCH}`);
      const perRowSingleMs = single.totalMs / single.n;
      const perRowBatchedMs = batched.totalMs / batched.n;
      const loadNoop = await openLoop(call, '/noop', RATE, seconds);
      const before = (await call('/count')).n;
      const loadInsert = await openLoop(call, '/insert', RATE, seconds);
      const after = (await call('/count')).n;
      const busyShare = (RATE * perRowSingleMs) / 1000;
      const f = (x, d = 3) => x.toFixed(d);
      const result = {
        storage: root,
        runs,
        sequential: { ...seq, addedP50Ms: seq.insert.p50 - seq.noop.p50, ratioP50: seq.insert.p50 / seq.noop.p50 },
        inWorker: { perRowSingleMs, perRowBatchedMs, batch: BATCH, batchedOverSingle: perRowBatchedMs / perRowSingleMs },
        load: {
          rate: RATE,
          seconds,
          noop: loadNoop,
          insert: loadInsert,
          achievedRatio: loadInsert.achievedPerSec / loadNoop.achievedPerSec,
          p50Ratio: loadInsert.p50 / loadNoop.p50,
          rowsWritten: after - before,
          rowsExpected: loadInsert.sent,
        },
        d1BusyShareAtRate: busyShare,
      };
      const rows = [
        [
          'sequential request: no-op vs + INSERT',
          `p50 ${f(seq.noop.p50)} ms vs ${f(seq.insert.p50)} ms`,
          `ratio ${f(seq.insert.p50 / seq.noop.p50, 2)}`,
          `${runs} pairs`,
        ],
        [
          'in-Worker per row: single vs batch of 50',
          `${f(perRowSingleMs)} ms vs ${f(perRowBatchedMs)} ms`,
          `ratio ${f(perRowBatchedMs / perRowSingleMs, 2)}`,
          '',
        ],
        [
          `${RATE}/s for ${seconds} s: no-op vs INSERT`,
          `${f(loadNoop.achievedPerSec, 0)}/s vs ${f(loadInsert.achievedPerSec, 0)}/s`,
          `p50 ratio ${f(loadInsert.p50 / loadNoop.p50, 2)}`,
          `rows ${after - before} of ${loadInsert.sent} sent`,
        ],
        [
          `D1 busy share at ${RATE} rows/s`,
          `${f(busyShare * 100, 1)} % of its one thread`,
          busyShare < 0.5 ? 'not the limit' : 'THE LIMIT: batch',
          '',
        ],
      ];
      return { ...result, rows };
    } finally {
      await mf.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await runIfMain(import.meta.url, run);
