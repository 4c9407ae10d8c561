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
    // The client's resend after a lost answer need not wait Google's 1 s backoff here.
    retry: { baseDelayMs: 10, maxDelayMs: 50 },
    ...o,
  });
}

/** The one result of the check whose name starts with `prefix`, run alone. */
async function check(prefix, o = {}) {
  const results = await runLocal({ cacheTable: 'table_metadata', only: [prefix], ...o });
  expect(results.map((r) => r.name)).toHaveLength(1);
  return /** @type {import('../../scripts/bigquery-contract.mjs').CheckResult} */ (results[0]);
}

/** Requests in the warehouse's journal that ran (or tried to run) a query whose SQL holds `marker`. */
function executionsOf(marker) {
  return t.wh.requests
    .list({ sql: marker })
    .filter((e) => e.op === 'query' || (e.op === 'insert' && e.body?.configuration?.dryRun !== true));
}

describe('bigquery contract suite against the local warehouse', () => {
  it(
    'every check passes, except those the local warehouse cannot run, which are skipped with the reason',
    { timeout: 120_000 },
    async () => {
      // umbrella: the dataset with the demo's 60-shard events_* family (docs/local-warehouse.md).
      const results = await runLocal({ dataset: 'umbrella', wildcardPrefix: 'events_', cacheTable: 'table_metadata', run: 'contractall' });
      const byStatus = (s) => results.filter((r) => r.status === s).map((r) => r.name);
      expect(
        byStatus('fail'),
        JSON.stringify(
          results.filter((r) => r.status === 'fail'),
          null,
          1,
        ),
      ).toEqual([]);
      expect(byStatus('pass')).toHaveLength(14);
      expect(results.find((r) => r.name.startsWith('dry run of a wildcard'))?.detail).toMatch(/^50 shards listed/);
      for (const r of results.filter((x) => x.status === 'skip')) expect(r.detail).toMatch(/\S/);
      const cancel = results.find((r) => r.name.startsWith('a query of a table past its deadline'));
      expect(cancel?.status).toBe('pass');
      expect(cancel?.detail).toMatch(/^settled at [1-9]\d* bytes billed/);
      // What the suite saw on the wire, the warehouse saw too: one job inserted twice under one id (the resend met
      // 409 duplicate), and one execution for the cut result, the cursor's pages and the paged result.
      const inserts = executionsOf('contractall insert');
      expect(inserts.map((e) => e.status)).toEqual([200, 409]);
      expect(new Set(inserts.map((e) => e.body.jobReference.jobId)).size).toBe(1);
      for (const marker of ['cut', 'cursor', 'pages']) expect(executionsOf(`contractall ${marker}`), marker).toHaveLength(1);
    },
  );

  it('a check fails loudly: a dataset the account may not read fails the INFORMATION_SCHEMA check', { timeout: 60_000 }, async () => {
    const results = await runLocal({ dataset: 'no_such_dataset', only: ['dry run of INFORMATION_SCHEMA'] });
    expect(results[0]?.status).toBe('fail');
  });

  it(
    'the view check catches a wrong setup: a view that does not exist fails it (it used to pass on any error)',
    { timeout: 120_000 },
    async () => {
      const results = await runLocal({ otherDatasetView: 'no_such_view', only: ['dry run of a view'] });
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
      const results = await runLocal({ dataset: 'umbrella', wildcardPrefix: narrow, only: ['dry run of a wildcard'] });
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
      const good = (await runLocal({ cacheTable: 'table_metadata', only: [name] })).find((r) => r.name.startsWith(name));
      expect(good?.status).toBe('pass');
      expect(good?.detail).toContain(`table_metadata listed under ${REAL}, mapped back to service-v1`);
      const blind = (
        await runLocal({
          cacheTable: 'table_metadata',
          only: [name],
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
      only: ['a query of a table past its deadline'],
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
      only: ["BigQuery's errors map"],
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

  it('the client-id jobs.insert check fails for a client that resends under a fresh job id', { timeout: 60_000 }, async () => {
    // The wire of a client that mints the id per attempt: the resend is a second job, which runs and bills.
    const freshIdPerAttempt = (/** @type {typeof fetch} */ f) => {
      let inserts = 0;
      return /** @type {typeof fetch} */ (
        async (input, init) => {
          const body = typeof init?.body === 'string' ? JSON.parse(init.body) : null;
          if (body?.jobReference?.jobId && body.configuration?.query && inserts++ > 0) {
            body.jobReference.jobId = `${body.jobReference.jobId}_again`;
            return f(input, { ...init, body: JSON.stringify(body) });
          }
          return f(input, init);
        }
      );
    };
    const good = await check('a client-id jobs.insert', { run: 'contractidok' });
    expect(good.status, good.detail).toBe('pass');
    const wrong = await check('a client-id jobs.insert', { run: 'contractidnew', wrapFetch: freshIdPerAttempt });
    expect(wrong.status).toBe('fail');
    expect(wrong.detail).toMatch(/^the resend used another job id/);
    expect(executionsOf('contractidnew insert').map((e) => e.status)).toEqual([200, 200]);
  });

  it('the cursor check fails for a client whose cursor runs the query again with OFFSET', { timeout: 60_000 }, async () => {
    const rerunningCursor = (/** @type {any} */ c) => {
      let last = '';
      return {
        ...c,
        query: (/** @type {string} */ sql, /** @type {any} */ opts) => ((last = sql), c.query(sql, opts)),
        readPage: async (/** @type {any} */ p) => {
          const sql = `SELECT * FROM (${last}\n) ORDER BY n LIMIT ${p.maxResults} OFFSET ${p.startIndex}`;
          const r = await c.query(sql, { ...p, maxBytesBilled: 1024 ** 3, rowCap: p.maxResults, timeoutMs: 30_000 });
          return { rows: r.rows, schema: r.schema, totalRows: 2500 };
        },
      };
    };
    const wrong = await check('a cursor reads further pages', { breakClient: rerunningCursor });
    expect(wrong.status).toBe('fail');
    expect(wrong.detail).toBe('3 executions for one result: a cursor must read the stored result');
  });

  it('the large-result check fails for a client that reads only the first answer page', { timeout: 60_000 }, async () => {
    const firstPageOnly = (/** @type {any} */ c) => ({
      ...c,
      query: async (/** @type {string} */ sql, /** @type {any} */ opts) => {
        const r = await c.query(sql, { ...opts, rowCap: Math.min(opts.rowCap, 2000) });
        return { ...r, truncated: false };
      },
    });
    const wrong = await check('a result larger than one answer', { breakClient: firstPageOnly });
    expect(wrong.status).toBe('fail');
    expect(wrong.detail).toBe('2000 of 6000 rows, truncated false');
  });

  it('the cut-result check fails for a client that runs a cut result again as a job (review 2, N1)', { timeout: 60_000 }, async () => {
    // The old path: the fast path without a job, and a second execution (requireJob) once the transport cuts.
    const rerunWhenCut = (/** @type {any} */ c) => ({
      ...c,
      query: async (/** @type {string} */ sql, /** @type {any} */ opts) => {
        if (!opts.keepJob) return c.query(sql, opts);
        const r = await c.query(sql, { ...opts, keepJob: false });
        return r.jobId === null ? c.query(sql, { ...opts, keepJob: false, requireJob: true }) : r;
      },
    });
    const wrong = await check('a result the caller cuts', { run: 'contractrerun', breakClient: rerunWhenCut });
    expect(wrong.status).toBe('fail');
    expect(wrong.detail).toMatch(/^2 executions \(POST .*\/queries, POST .*\/jobs\): the cut result ran again$/);
    expect(executionsOf('contractrerun cut')).toHaveLength(2);
  });

  it(
    'the location check fails for a client that reports a dataset in another location as FORBIDDEN_TABLE',
    { timeout: 60_000 },
    async () => {
      const everyNotFoundForbidden = (/** @type {any} */ c) => ({
        ...c,
        query: (/** @type {string} */ sql, /** @type {any} */ opts) =>
          c.query(sql, opts).catch((/** @type {any} */ err) => {
            if (err.details?.reason !== 'notFound') throw err;
            throw Object.assign(new Error('forbidden'), { code: 'FORBIDDEN_TABLE', details: { stage: 'warehouse', reason: 'notFound' } });
          }),
      });
      const good = await check('a dataset outside BIGQUERY_LOCATION');
      expect(good.status, good.detail).toBe('pass');
      expect(good.detail).toMatch(/^location EU: INTERNAL/);
      const wrong = await check('a dataset outside BIGQUERY_LOCATION', { breakClient: everyNotFoundForbidden });
      expect(wrong.status).toBe('fail');
      expect(wrong.detail).toMatch(/^location EU: FORBIDDEN_TABLE/);
    },
  );

  it('without credentials, npm run test:bigquery is skipped with one line and exit 0', () => {
    const env = /** @type {NodeJS.ProcessEnv} */ (/** @type {unknown} */ ({ PATH: process.env.PATH ?? '' }));
    const out = String(execFileSync(process.execPath, ['scripts/bigquery-contract.mjs'], { env, encoding: 'utf8' }));
    expect(out.trim().split('\n')).toHaveLength(1);
    expect(out).toMatch(/^test:bigquery skipped: set BIGQUERY_CONTRACT_CREDENTIALS/);
  });
});
