#!/usr/bin/env node
// Runs every query of dev/warehouse/corpus/*.sql through the local warehouse's jobs.query, exactly as the
// Worker sends it, and reports how many run:  node dev/warehouse/corpus-report.mjs [--verbose]
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createServiceAccount, signServiceAccountJwt } from './service-account.mjs';
import { startWarehouse } from './server.mjs';

export const CORPUS_DIR = fileURLToPath(new URL('./corpus/', import.meta.url));

/** @returns {{ name: string, sql: string }[]} */
export function loadCorpus() {
  return readdirSync(CORPUS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => ({ name: f.replace(/\.sql$/, ''), sql: readFileSync(CORPUS_DIR + f, 'utf8') }));
}

/**
 * Runs the corpus against a warehouse at `url`.
 * @returns {Promise<{ name: string, ok: boolean, ms: number, rows: number, error?: string, response?: any }[]>}
 */
export async function runCorpus(url, serviceAccountJson) {
  const token = signServiceAccountJwt(serviceAccountJson);
  const results = [];
  for (const { name, sql } of loadCorpus()) {
    const started = performance.now();
    const res = await fetch(`${url}/bigquery/v2/projects/service-v1/queries`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: sql, useLegacySql: false, maxResults: 1000, timeoutMs: 30_000 }),
    });
    const body = await res.json();
    const ms = performance.now() - started;
    if (res.ok && body.jobComplete) results.push({ name, ok: true, ms, rows: Number(body.totalRows), response: body });
    else
      results.push({
        name,
        ok: false,
        ms,
        rows: 0,
        error: `${res.status} ${body.error?.errors?.[0]?.reason ?? ''}: ${body.error?.message ?? JSON.stringify(body)}`,
      });
  }
  return results;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const verbose = process.argv.includes('--verbose');
  const sa = createServiceAccount();
  const wh = await startWarehouse({ serviceAccounts: [sa] });
  try {
    const results = await runCorpus(wh.url, sa.json);
    for (const r of results) {
      if (!r.ok) console.log(`FAIL ${r.name}: ${r.error}`);
      else if (verbose) console.log(`ok   ${r.name} (${r.rows} rows, ${Math.round(r.ms)} ms)`);
    }
    const passed = results.filter((r) => r.ok).length;
    console.log(`${passed}/${results.length} corpus queries run on the local warehouse (${((100 * passed) / results.length).toFixed(1)}%)`);
  } finally {
    await wh.close();
  }
}
