// `npm run test:bigquery`'s contract suite run against the local warehouse: the same checks, the Worker's own
// client bundled from src/, so the suite is proven to work (and to fail) before anyone points it at Google.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runContract } from '../../scripts/bigquery-contract.mjs';
import { shardNames } from '../../dev/warehouse/demo-data.mjs';
import { startTestWarehouse } from './warehouse-helpers.mjs';

let t;
const REAL = 'wqa-contract-real';

beforeAll(async () => {
  // A project other than service-v1, so every gated check goes through the mapping (withProject on the way in,
  // contractReferences on the way back), as on a real deployment.
  t = await startTestWarehouse({ project: REAL });
});

afterAll(async () => {
  await t?.wh.close();
});

/** The suite against the local warehouse: project REAL, dataset `acme` unless `o` says otherwise. */
function runLocal(o) {
  return runContract({
    apiBase: t.wh.url,
    project: REAL,
    dataset: 'acme',
    location: 'US',
    serviceAccountJson: t.sa.json,
    local: true,
    ...o,
  });
}

describe('bigquery contract suite against the local warehouse', () => {
  it(
    'every check passes, except those the local warehouse cannot run, which are skipped with the reason',
    { timeout: 120_000 },
    async () => {
      // umbrella: the dataset with the demo's 60-shard events_* family (docs/local-warehouse.md).
      const results = await runLocal({ dataset: 'umbrella', wildcardPrefix: 'events_', cacheTable: 'table_metadata' });
      const byStatus = (s) => results.filter((r) => r.status === s).map((r) => r.name);
      expect(
        byStatus('fail'),
        JSON.stringify(
          results.filter((r) => r.status === 'fail'),
          null,
          1,
        ),
      ).toEqual([]);
      expect(byStatus('pass')).toHaveLength(9);
      expect(results.find((r) => r.name.startsWith('dry run of a wildcard'))?.detail).toMatch(/^60 shards listed/);
      for (const r of results.filter((x) => x.status === 'skip')) expect(r.detail).toMatch(/\S/);
      const cancel = results.find((r) => r.name.startsWith('a query of a table past its deadline'));
      expect(cancel?.status).toBe('pass');
      expect(cancel?.detail).toMatch(/^settled at [1-9]\d* bytes billed/);
    },
  );

  it('a check fails loudly: a dataset the account may not read fails the INFORMATION_SCHEMA check', { timeout: 60_000 }, async () => {
    const results = await runLocal({ dataset: 'no_such_dataset' });
    expect(results[0]?.status).toBe('fail');
  });

  it(
    'the view check catches a wrong setup: a view that does not exist fails it (it used to pass on any error)',
    { timeout: 120_000 },
    async () => {
      const results = await runLocal({ otherDatasetView: 'no_such_view' });
      const view = results.find((r) => r.name.startsWith('dry run of a view over another dataset'));
      expect(view?.status).toBe('fail');
      expect(view?.detail).toMatch(/never tried|before the dry-run gate/);
    },
  );

  it(
    'the wildcard check fails on a family under the table limit, which would never reach onlyWildcardShards',
    { timeout: 120_000 },
    async () => {
      // The newest shard's name less its last digit: the ten days at most of one decade of a month.
      const narrow = /** @type {string} */ (shardNames(t.wh.today).at(-1)).slice(0, -1);
      const results = await runLocal({ dataset: 'umbrella', wildcardPrefix: narrow });
      const wildcard = results.find((r) => r.name.startsWith('dry run of a wildcard'));
      expect(wildcard?.status).toBe('fail');
      expect(wildcard?.detail).toMatch(/^only \d+ shard\(s\) listed; point BIGQUERY_CONTRACT_WILDCARD_PREFIX at a family of 50/);
    },
  );

  it(
    'the INFORMATION_SCHEMA check goes through the service-v1 mapping and fails for a client that never reads referencedTables',
    { timeout: 120_000 },
    async () => {
      const name = 'dry run of INFORMATION_SCHEMA.COLUMNS';
      const good = (await runLocal({ cacheTable: 'table_metadata' })).find((r) => r.name.startsWith(name));
      expect(good?.status).toBe('pass');
      expect(good?.detail).toContain(`table_metadata listed under ${REAL}, mapped back to service-v1`);
      const blind = (
        await runLocal({
          cacheTable: 'table_metadata',
          breakClient: (c) => ({ ...c, dryRun: async (sql, opts) => ({ ...(await c.dryRun(sql, opts)), referencedTables: [] }) }),
        })
      ).find((r) => r.name.startsWith(name));
      expect(blind?.status).toBe('fail');
      // The gate's own cross-check (a parsed table the dry run does not list) or the check's listing catches it.
      expect(blind?.detail).toMatch(/^a dry run of table_metadata: dry-run gate:|does not list it under wqa-contract-real/);
    },
  );

  it('the cancel check fails for a client that settles a cancelled query at 0 bytes', { timeout: 120_000 }, async () => {
    const results = await runLocal({
      cacheTable: 'table_metadata',
      // The plausible wrong settlement: whatever jobs.get says, report 0 bytes billed.
      breakClient: (c) => ({
        ...c,
        query: (sql, opts) => c.query(sql, { ...opts, onLateBilling: opts.onLateBilling && ((p) => opts.onLateBilling(p.then(() => 0))) }),
      }),
    });
    const cancel = results.find((r) => r.name.startsWith('a query of a table past its deadline'));
    expect(cancel?.status).toBe('fail');
    expect(cancel?.detail).toBe('settled at 0 bytes billed, though the query reads table_metadata');
  });

  it('the error-mapping check fails for a client that reports every warehouse error as QUERY_FAILED', { timeout: 120_000 }, async () => {
    const results = await runLocal({
      cacheTable: 'table_metadata',
      breakClient: (c) => ({
        ...c,
        query: (sql, opts) =>
          c.query(sql, opts).catch((err) => {
            throw Object.assign(new Error(err.message), { code: 'QUERY_FAILED', details: { stage: 'warehouse' } });
          }),
      }),
    });
    const mapping = results.find((r) => r.name.startsWith("BigQuery's errors map"));
    expect(mapping?.status).toBe('fail');
    expect(mapping?.detail).toMatch(/^a 1-byte ceiling: QUERY_FAILED/);
  });

  it('without credentials, npm run test:bigquery is skipped with one line and exit 0', () => {
    const env = /** @type {NodeJS.ProcessEnv} */ (/** @type {unknown} */ ({ PATH: process.env.PATH ?? '' }));
    const out = String(execFileSync(process.execPath, ['scripts/bigquery-contract.mjs'], { env, encoding: 'utf8' }));
    expect(out.trim().split('\n')).toHaveLength(1);
    expect(out).toMatch(/^test:bigquery skipped: set BIGQUERY_CONTRACT_CREDENTIALS/);
  });
});
