import { env } from 'cloudflare:test';
import { describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { ApiError } from '../src/errors';
import { createWarehouseClient, JobStillRunning, type QueryOptions, type WarehouseClientDeps } from '../src/warehouse/bigquery-client';
import { jwtPart, newKeyPair } from './warehouse-fixtures';
import { warehouseFaults } from './warehouse-faults';

// The Worker's BigQuery client against the real local warehouse (dev/warehouse, started by test/global-setup.ts)
// over loopback. Faults are armed on the warehouse's control endpoint and matched to one test's job labels, so
// tests in other files sharing the warehouse never see them. What the client sent is read back from the
// warehouse's request journal.

const WH = env.BIGQUERY_API_BASE;
/** Short backoff so retry tests take milliseconds; the policy's shape (tries, caps) is the default. */
const FAST: WarehouseClientDeps = { retry: { baseDelayMs: 5, maxDelayMs: 20, maxTotalDelayMs: 1000 } };

const Recorded = z.object({
  method: z.string(),
  path: z.string(),
  op: z.string(),
  query: z.record(z.string(), z.string()),
  body: z.unknown(),
  auth: z.object({ ok: z.boolean(), iss: z.string().optional(), why: z.string().optional() }),
  status: z.number().nullable(),
  answer: z
    .object({
      jobId: z.string().nullable().optional(),
      queryId: z.string().nullable().optional(),
      state: z.string().nullable().optional(),
      errorReason: z.string().nullable().optional(),
      totalBytesBilled: z.string().nullable().optional(),
      cacheHit: z.boolean().nullable().optional(),
    })
    .nullable(),
});
type Recorded = z.infer<typeof Recorded>;

const QueryBody = z.object({
  query: z.string(),
  useLegacySql: z.literal(false),
  maximumBytesBilled: z.string(),
  maxResults: z.number(),
  timeoutMs: z.number(),
  jobTimeoutMs: z.string(),
  jobCreationMode: z.enum(['JOB_CREATION_OPTIONAL', 'JOB_CREATION_REQUIRED']),
  formatOptions: z.object({ useInt64Timestamp: z.literal(true) }),
  location: z.string(),
  labels: z.record(z.string(), z.string()),
  requestId: z.string(),
});

const InsertBody = z.object({
  jobReference: z.object({ projectId: z.string(), jobId: z.string().regex(/^wqa_[0-9a-f]{32}$/), location: z.string() }),
  configuration: z.object({
    labels: z.record(z.string(), z.string()),
    jobTimeoutMs: z.string(),
    query: z.object({ query: z.string(), useLegacySql: z.literal(false), maximumBytesBilled: z.string() }),
  }),
});

const { arm } = warehouseFaults();

/** Journal entries: by this test's label (jobs.query / jobs.insert), or by op and job id (polls, pages, gets, cancels). */
async function journal(filter: { tag?: string; op?: string; jobId?: string }): Promise<Recorded[]> {
  const qs = new URLSearchParams({ limit: '500' });
  if (filter.tag) qs.set('label', `t:${filter.tag}`);
  if (filter.op) qs.set('op', filter.op);
  const res = await fetch(`${WH}/__requests?${qs}`);
  const all = z.object({ requests: z.array(Recorded) }).parse(await res.json()).requests;
  return filter.jobId ? all.filter((r) => r.path.includes(`/${filter.jobId}`)) : all;
}

function newTag(): string {
  return crypto.randomUUID().replace(/-/g, '').slice(0, 16);
}

function opts(tag: string, over: Partial<QueryOptions> = {}): QueryOptions {
  return {
    brandId: 'brand_acme',
    requestId: 'req_test',
    labels: { t: tag },
    maxBytesBilled: 10 * 1024 ** 3,
    rowCap: 1000,
    timeoutMs: 20_000,
    ...over,
  };
}

async function failure(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

// This file drives the client directly, below run_query's mapping: SQL names the warehouse's own project.
const P = env.BIGQUERY_PROJECT;
const ORDERS = `\`${P}.acme.fact__orders\``;
const MIB = 1024 * 1024;

describe('query: results', () => {
  it('decodes every type the warehouse returns into plain JSON, with the schema', async () => {
    const sql = `SELECT 1 AS i, 9007199254740993 AS big, -9223372036854775808 AS minint, 1.5 AS f, 1e300 AS huge,
      CAST('NaN' AS FLOAT64) AS nan, CAST('-Infinity' AS FLOAT64) AS ninf, NUMERIC '-0.000000001' AS n,
      BIGNUMERIC '12345678901234567890.12345678901234567' AS bn, TRUE AS b, 'x' AS s, CAST(NULL AS STRING) AS ns,
      b'abc' AS by, DATE '2024-02-29' AS d, DATETIME '2024-02-29 12:34:56.5' AS dt, TIME '12:34:56' AS t,
      TIMESTAMP '2024-05-01 16:00:00.123456 UTC' AS ts, TIMESTAMP '1969-12-31 23:59:59.5 UTC' AS ts0,
      STRUCT(1 AS a, 'y' AS z) AS rec, [1, 2, 3] AS arr, [STRUCT('a' AS k, 1 AS v), STRUCT('b' AS k, 2 AS v)] AS kv,
      JSON '{"a": [1, "two"]}' AS j, INTERVAL 3 DAY AS iv`;
    const r = await createWarehouseClient(env).query(sql, opts(newTag()));
    expect(r.rows).toEqual([
      {
        i: 1,
        big: '9007199254740993',
        minint: '-9223372036854775808',
        f: 1.5,
        huge: 1e300,
        nan: 'NaN',
        ninf: '-Infinity',
        n: '-0.000000001',
        bn: '12345678901234567890.12345678901234567',
        b: true,
        s: 'x',
        ns: null,
        by: 'YWJj',
        d: '2024-02-29',
        dt: '2024-02-29T12:34:56.500000',
        t: '12:34:56',
        ts: '2024-05-01T16:00:00.123456Z',
        ts0: '1969-12-31T23:59:59.500000Z',
        rec: { a: 1, z: 'y' },
        arr: [1, 2, 3],
        kv: [
          { k: 'a', v: 1 },
          { k: 'b', v: 2 },
        ],
        j: { a: [1, 'two'] },
        iv: '0-0 3 0:0:0',
      },
    ]);
    expect(r.schema.map((f) => [f.name, f.type, f.mode])).toContainEqual(['arr', 'INTEGER', 'REPEATED']);
    expect(r.schema.find((f) => f.name === 'rec')).toEqual({
      name: 'rec',
      type: 'RECORD',
      mode: 'NULLABLE',
      fields: [
        { name: 'a', type: 'INTEGER', mode: 'NULLABLE' },
        { name: 'z', type: 'STRING', mode: 'NULLABLE' },
      ],
    });
    expect(r.truncated).toBe(false);
    // The fast path: a short, complete result runs without a job (JOB_CREATION_OPTIONAL); BigQuery names it by queryId.
    expect(r.jobId).toBeNull();
    expect(r.queryId).toMatch(/\S/);
    expect(r.requests).toBe(1);
  });

  it("timestamps keep every microsecond anywhere in BigQuery's range: integer microseconds are asked for and decoded", async () => {
    const tag = newTag();
    const sql = `SELECT TIMESTAMP '9999-12-31 23:59:59.999999 UTC' AS hi, TIMESTAMP '0001-01-01 00:00:00.000001 UTC' AS lo,
      TIMESTAMP '2024-05-01 16:00:00.000001 UTC' AS near, [TIMESTAMP '1970-01-01 00:00:01 UTC'] AS arr`;
    const r = await createWarehouseClient(env).query(sql, opts(tag));
    // Float seconds (the REST default) cannot carry these: 253402300799.999999 has more digits than a double.
    expect(r.rows).toEqual([
      {
        hi: '9999-12-31T23:59:59.999999Z',
        lo: '0001-01-01T00:00:00.000001Z',
        near: '2024-05-01T16:00:00.000001Z',
        arr: ['1970-01-01T00:00:01Z'],
      },
    ]);
    const [sent] = await journal({ tag, op: 'query' });
    expect(QueryBody.parse(sent?.body).formatOptions).toEqual({ useInt64Timestamp: true });
  });

  it('sends jobs.query as agreed: GoogleSQL, byte ceiling, rowCap, timeout, jobTimeoutMs, optional job creation, int64 timestamps, location, clean labels, a UUID requestId', async () => {
    const tag = newTag();
    const r = await createWarehouseClient(env).query(
      `SELECT channel, COUNT(*) AS n FROM ${ORDERS} GROUP BY channel ORDER BY channel`,
      opts(tag, { rowCap: 2, maxBytesBilled: 5_000_000_000, labels: { t: tag, 'Key.ID': 'Key_ABC', '9op': 'run query' } }),
    );
    expect(r.rows).toEqual([
      { channel: 'marketplace', n: expect.any(Number) },
      { channel: 'store', n: expect.any(Number) },
    ]);
    // Truncation comes from totalRows; a result that does not fit the answer has a job, so a cursor can follow.
    expect(r.truncated).toBe(true);
    expect(r.totalRows).toBeGreaterThan(2);
    expect(r.jobId).toMatch(/\S/);
    expect(r.totalBytesProcessed).toBeGreaterThan(0);
    const sent = await journal({ tag, op: 'query' });
    expect(sent).toHaveLength(1);
    const body = QueryBody.parse(sent[0]?.body);
    expect(body).toMatchObject({
      useLegacySql: false,
      maximumBytesBilled: '5000000000',
      maxResults: 2,
      jobTimeoutMs: '25000',
      location: 'US',
      labels: { t: tag, key_id: 'key_abc', l_9op: 'run_query' },
    });
    expect(body.timeoutMs).toBeGreaterThan(19_000);
    expect(body.timeoutMs).toBeLessThanOrEqual(20_000);
    expect(body.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('the first answer asks for at most 2,000 rows, so no first page nears the 10 MB BigQuery allows (N5)', async () => {
    const tag = newTag();
    const r = await createWarehouseClient(env).query(
      `SELECT order_id FROM ${ORDERS} LIMIT 2500 /* ${tag} */`,
      opts(tag, { rowCap: 10_000 }),
    );
    expect(r.rows).toHaveLength(2500);
    const [sent] = await journal({ tag, op: 'query' });
    expect(QueryBody.parse(sent?.body).maxResults).toBe(2000);
  });

  it('pages with pageToken until rowCap rows are held, without gaps or repeats at page boundaries', { timeout: 60_000 }, async () => {
    // ~2 KB rows: the warehouse (like BigQuery) cuts a page at ~10 MB, so 6,000 rows take two pages.
    const sql = "SELECT n, REPEAT('x', 2000) AS pad FROM UNNEST(GENERATE_ARRAY(1, 6000)) AS n ORDER BY n";
    const client = createWarehouseClient(env);

    const tagAll = newTag();
    const all = await client.query(sql, opts(tagAll, { rowCap: 10_000 }));
    expect(all.truncated).toBe(false);
    expect(all.rows.map((r) => r.n)).toEqual(Array.from({ length: 6000 }, (_, i) => i + 1));
    const jobId = all.jobId ?? '';
    const pages = (await journal({ op: 'getQueryResults', jobId })).filter((r) => r.query.pageToken);
    expect(pages.length).toBeGreaterThanOrEqual(1);
    expect(pages.every((p) => p.query.location === 'US')).toBe(true);

    const tagCap = newTag();
    const capped = await client.query(sql, opts(tagCap, { rowCap: 5500 }));
    expect(capped.truncated).toBe(true);
    expect(capped.rows).toHaveLength(5500);
    expect(capped.rows.map((r) => r.n)).toEqual(Array.from({ length: 5500 }, (_, i) => i + 1));
    const capPages = (await journal({ op: 'getQueryResults', jobId: capped.jobId ?? '' })).filter((r) => r.query.pageToken);
    expect(capPages).toHaveLength(1);
    // Only the rows still wanted are asked for: fewer than the first request's rowCap.
    const asked = Number(capPages[0]?.query.maxResults);
    expect(asked).toBeGreaterThan(0);
    expect(asked).toBeLessThan(5500);
    expect(capPages[0]?.query['formatOptions.useInt64Timestamp']).toBe('true');
  });

  it('an empty result is an empty list with its schema', async () => {
    const r = await createWarehouseClient(env).query(`SELECT order_id FROM ${ORDERS} WHERE quantity < 0`, opts(newTag()));
    expect(r).toMatchObject({ rows: [], truncated: false, schema: [{ name: 'order_id', type: 'STRING' }] });
  });
});

describe('dryRun', () => {
  it('returns statement type, referenced tables and a byte estimate from jobs.insert', async () => {
    const tag = newTag();
    const d = await createWarehouseClient(env).dryRun(
      `SELECT c.country, SUM(o.revenue) AS revenue FROM ${ORDERS} o JOIN \`${P}.acme.dim__customers\` c USING (customer_id) GROUP BY 1`,
      { brandId: 'brand_acme', requestId: 'req_test', labels: { t: tag, Op: 'Dry Run' }, maxBytesBilled: 123456789 },
    );
    expect(d.statementType).toBe('SELECT');
    expect(d.referencedTables).toEqual(
      expect.arrayContaining([
        { projectId: P, datasetId: 'acme', tableId: 'fact__orders' },
        { projectId: P, datasetId: 'acme', tableId: 'dim__customers' },
      ]),
    );
    expect(d.referencedTables).toHaveLength(2);
    expect(d.referencedRoutines).toEqual([]);
    expect(d.totalBytesProcessed).toBeGreaterThan(0);
    const [sent, ...more] = await journal({ tag, op: 'insert' });
    expect(more).toHaveLength(0);
    expect(sent?.body).toMatchObject({
      jobReference: { projectId: P, location: 'US' },
      configuration: { dryRun: true, labels: { t: tag, op: 'dry_run' }, query: { useLegacySql: false, maximumBytesBilled: '123456789' } },
    });
    // Nothing ran.
    expect(await journal({ tag, op: 'query' })).toHaveLength(0);
  });

  it("a syntax error is 400 QUERY_FAILED with BigQuery's message and its line and column", async () => {
    const err = await failure(
      createWarehouseClient(env).dryRun('SELECT 1,\n  2 +', { brandId: 'brand_acme', requestId: 'r', labels: { t: newTag() } }),
    );
    expect(err).toMatchObject({ code: 'QUERY_FAILED', status: 400 });
    expect(err.message).toMatch(/Syntax error/);
    expect(err.details).toMatchObject({ stage: 'warehouse', reason: 'invalidQuery', line: 2 });
  });

  it('retries a dry run through a 503', async () => {
    const tag = newTag();
    await arm({ kind: 'http503', count: 1, match: { op: 'insert', label: { t: tag } } });
    const d = await createWarehouseClient(env, FAST).dryRun(`SELECT order_id FROM ${ORDERS}`, {
      brandId: 'brand_acme',
      requestId: 'r',
      labels: { t: tag },
    });
    expect(d.statementType).toBe('SELECT');
    expect((await journal({ tag, op: 'insert' })).map((r) => r.status)).toEqual([503, 200]);
  });
});

describe('query: error mapping', () => {
  it('a query over the byte ceiling is 400 QUERY_TOO_EXPENSIVE, enforced by the warehouse', async () => {
    const err = await failure(createWarehouseClient(env).query(`SELECT * FROM ${ORDERS}`, opts(newTag(), { maxBytesBilled: 1000 })));
    expect(err).toMatchObject({ code: 'QUERY_TOO_EXPENSIVE', status: 400 });
    expect(err.details).toMatchObject({
      stage: 'warehouse',
      reason: 'bytesBilledLimitExceeded',
      maxBytesBilled: 1000,
      bytesRequired: expect.any(Number),
    });
  });

  it('a syntax error is 400 QUERY_FAILED and is not retried', async () => {
    const tag = newTag();
    const err = await failure(createWarehouseClient(env, FAST).query('SELECT FROM WHERE', opts(tag)));
    expect(err).toMatchObject({ code: 'QUERY_FAILED', status: 400, details: { stage: 'warehouse', line: 1 } });
    expect(await journal({ tag, op: 'query' })).toHaveLength(1);
  });

  it("a table missing from the brand's dataset is 400 QUERY_FAILED naming it; the dry run says the same", async () => {
    const sql = `SELECT * FROM \`${P}.acme.no_such_table\``;
    const err = await failure(createWarehouseClient(env).query(sql, opts(newTag(), { dataset: 'acme' })));
    expect(err).toMatchObject({ code: 'QUERY_FAILED', status: 400, details: { reason: 'notFound', table: `${P}.acme.no_such_table` } });
    const dry = await failure(
      createWarehouseClient(env).dryRun(sql, { brandId: 'brand_acme', dataset: 'acme', requestId: 'r', labels: {} }),
    );
    expect(dry).toMatchObject({ code: 'QUERY_FAILED', details: { table: `${P}.acme.no_such_table` } });
  });

  it("without the brand's dataset to compare with, a missing table is 403 FORBIDDEN_TABLE, with no upstream text on the wire", async () => {
    const err = await failure(createWarehouseClient(env).query(`SELECT * FROM \`${P}.acme.no_such_table\``, opts(newTag())));
    expect(err).toMatchObject({
      code: 'FORBIDDEN_TABLE',
      status: 403,
      details: { reason: 'notFound', reference: `${P}:acme.no_such_table` },
    });
    expect(err.message).not.toMatch(/location US/);
  });

  it('a 2xx answer that is not JSON is 502 WAREHOUSE_ERROR after one try', async () => {
    const tag = newTag();
    await arm({ kind: 'malformedJson', persistent: true, match: { op: 'query', label: { t: tag } } });
    const err = await failure(createWarehouseClient(env, FAST).query('SELECT 1 AS x', opts(tag)));
    expect(err).toMatchObject({ code: 'WAREHOUSE_ERROR', status: 502 });
    expect(err.message).not.toMatch(/bigquery#queryResponse/);
    expect(await journal({ tag, op: 'query' })).toHaveLength(1);
  });
});

describe('query: retries', () => {
  it.each([
    ['rateLimitExceeded', undefined],
    ['rateLimitExceeded', 429],
  ])(
    'the fast path is resent through two refusals (%s, status %s): BigQuery refused them before running anything',
    async (kind, status) => {
      const tag = newTag();
      await arm({ kind, count: 2, status, match: { op: 'query', label: { t: tag } } });
      const r = await createWarehouseClient(env, FAST).query('SELECT 42 AS answer', opts(tag));
      expect(r.rows).toEqual([{ answer: 42 }]);
      expect(r.requests).toBe(3);
      expect(await journal({ tag, op: 'query' })).toHaveLength(3);
    },
  );

  it.each([['http503'], ['html502'], ['dropConnection'], ['http500'], ['backendError']])(
    'a fast-path submission with an unknown outcome (%s) is not resent: it is submitted once as a client-id job, which answers, billed what that job billed (N6)',
    async (kind) => {
      const tag = newTag();
      await arm({ kind, count: 1, match: { op: 'query', label: { t: tag } } });
      let late: Promise<number> | null = null;
      const r = await createWarehouseClient(env, FAST).query(
        `SELECT order_id FROM ${ORDERS} ORDER BY order_id LIMIT 2 /* ${tag} */`,
        opts(tag, {
          billedIfUnknown: 12_345,
          onLateBilling: (p) => {
            late = p;
          },
        }),
      );
      expect(r.rows).toHaveLength(2);
      // Resending jobs.query could start a second billed run (BigQuery may ignore requestId for read-only queries).
      expect(await journal({ tag, op: 'query' })).toHaveLength(1);
      const inserts = await journal({ tag, op: 'insert' });
      expect(inserts.map((i) => i.status)).toEqual([200]);
      expect(r.jobId).toBe(InsertBody.parse(inserts[0]?.body).jobReference.jobId);
      const [got] = await journal({ op: 'get', jobId: r.jobId ?? '' });
      expect(r.totalBytesBilled).toBe(Number(got?.answer?.totalBytesBilled));
      expect(late).toBeNull();
    },
  );

  it('when the client-id fallback fails too, the attempt that may have run counts the estimate, and the fallback job what it billed', async () => {
    const tag = newTag();
    await arm({ kind: 'http503', count: 1, match: { op: 'query', label: { t: tag } } });
    await arm({ kind: 'http503', persistent: true, match: { op: 'insert', label: { t: tag } } });
    const late: Promise<number>[] = [];
    const err = await failure(
      createWarehouseClient(env, { ...FAST, settleTimeoutMs: 2000, pollBackoff: { baseMs: 50, maxMs: 200 } }).query(
        `SELECT 1 AS x /* ${tag} */`,
        opts(tag, { billedIfUnknown: 12_345, onLateBilling: (p) => late.push(p) }),
      ),
    );
    expect(err).toMatchObject({ code: 'WAREHOUSE_UNAVAILABLE', status: 503 });
    expect(err.message).not.toMatch(/<html|internal error occurred/i);
    expect(await journal({ tag, op: 'query' })).toHaveLength(1);
    // The fallback job was never created (every insert answered 503): after the not-found grace it billed 0.
    expect(await Promise.all(late)).toEqual([12_345, 0]);
  });

  it('gives up on a persistent refusal after 6 tries with WAREHOUSE_UNAVAILABLE, counting nothing', async () => {
    const tag = newTag();
    await arm({ kind: 'rateLimitExceeded', persistent: true, match: { op: 'query', label: { t: tag } } });
    let late: Promise<number> | null = null;
    const err = await failure(
      createWarehouseClient(env, FAST).query(
        'SELECT 1 AS x',
        opts(tag, {
          billedIfUnknown: 99,
          onLateBilling: (p) => {
            late = p;
          },
        }),
      ),
    );
    expect(err).toMatchObject({ code: 'WAREHOUSE_UNAVAILABLE', status: 503 });
    expect(await journal({ tag, op: 'query' })).toHaveLength(6);
    expect(late).toBeNull();
  });

  it('retries a failed getQueryResults poll', async () => {
    const tag = newTag();
    await arm({ kind: 'jobIncomplete', count: 1, match: { op: 'query', label: { t: tag } } });
    await arm({ kind: 'http503', count: 1, match: { op: 'getQueryResults', label: { t: tag } } });
    const r = await createWarehouseClient(env, FAST).query('SELECT 7 AS x', opts(tag));
    expect(r.rows).toEqual([{ x: 7 }]);
    expect((await journal({ op: 'getQueryResults', jobId: r.jobId ?? '' })).map((p) => p.status)).toEqual([503, 200]);
  });

  it('a job that failed in the warehouse (jobInternalError) is not polled again: the same request only repeats the failure', async () => {
    const tag = newTag();
    await arm({ kind: 'jobIncomplete', count: 1, match: { op: 'query', label: { t: tag } } });
    await arm({ kind: 'jobInternalError', count: 3, match: { op: 'getQueryResults', label: { t: tag } } });
    const err = await failure(createWarehouseClient(env, FAST).query(`SELECT 8 AS x /* ${tag} */`, opts(tag)));
    expect(err).toMatchObject({ code: 'WAREHOUSE_ERROR', status: 502 });
    const [sent] = await journal({ tag, op: 'query' });
    const jobId = sent?.answer?.jobId ?? '';
    expect(jobId).toMatch(/\S/);
    expect((await journal({ op: 'getQueryResults', jobId })).map((p) => p.status)).toEqual([400]);
  });
});

describe('query: a job with a client-chosen id (requireJob)', () => {
  it('jobs.insert with jobReference.jobId, then getQueryResults and jobs.get; retries resend the same id', async () => {
    const tag = newTag();
    await arm({ kind: 'http503', count: 2, match: { op: 'insert', label: { t: tag } } });
    const r = await createWarehouseClient(env, FAST).query(
      `SELECT order_id FROM ${ORDERS} ORDER BY order_id LIMIT 3 /* ${tag} */`,
      opts(tag, { requireJob: true }),
    );
    expect(r.rows).toHaveLength(3);
    expect(r.jobId).toMatch(/^wqa_[0-9a-f]{32}$/);
    expect(r.totalBytesBilled).toBeGreaterThan(0);
    const inserts = await journal({ tag, op: 'insert' });
    expect(inserts.map((i) => i.status)).toEqual([503, 503, 200]);
    expect(new Set(inserts.map((i) => InsertBody.parse(i.body).jobReference.jobId))).toEqual(new Set([r.jobId]));
    expect(InsertBody.parse(inserts[0]?.body).configuration.jobTimeoutMs).toBe('25000');
    expect((await journal({ op: 'getQueryResults', jobId: r.jobId ?? '' })).length).toBeGreaterThanOrEqual(1);
  });

  it('an insert whose answer was lost is resent and met with 409 duplicate: the one job runs once, never a second', async () => {
    const tag = newTag();
    let lost = 0;
    // The network loses the first answer of jobs.insert after the warehouse has created the job.
    const lossy: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (init?.method === 'POST' && String(input).endsWith('/jobs') && lost === 0) {
        lost++;
        await res.arrayBuffer();
        throw new TypeError('connection reset');
      }
      return res;
    };
    const r = await createWarehouseClient(env, { ...FAST, fetch: lossy }).query(
      `SELECT 5 AS five /* ${tag} */`,
      opts(tag, { requireJob: true }),
    );
    expect(r.rows).toEqual([{ five: 5 }]);
    const inserts = await journal({ tag, op: 'insert' });
    expect(inserts.map((i) => i.status)).toEqual([200, 409]);
    expect(new Set(inserts.map((i) => InsertBody.parse(i.body).jobReference.jobId)).size).toBe(1);
  });

  it('a job-less answer over the byte budget is kept whole: it is already held, and nothing runs it a second time (N1)', async () => {
    const tag = newTag();
    const sql = `SELECT order_id, REPEAT('x', 1000) AS pad FROM ${ORDERS} ORDER BY order_id LIMIT 50 /* ${tag} */`;
    const r = await createWarehouseClient(env).query(sql, opts(tag, { maxResultBytes: 10_000 }));
    expect(r).toMatchObject({ truncated: false, totalRows: 50, jobId: null });
    expect(r.rows).toHaveLength(50);
    expect(await journal({ tag, op: 'query' })).toHaveLength(1);
    expect(await journal({ tag, op: 'insert' })).toHaveLength(0);
  });

  it('keepJob: one jobs.query with JOB_CREATION_REQUIRED keeps a job, so a cut result continues from the same execution (N1)', async () => {
    const tag = newTag();
    // CURRENT_DATE: BigQuery never caches it, so a second execution would bill again.
    const sql = `SELECT order_id, REPEAT('x', 1000) AS pad FROM ${ORDERS} WHERE order_date < CURRENT_DATE() ORDER BY order_id LIMIT 50 /* ${tag} */`;
    const client = createWarehouseClient(env);
    const r = await client.query(sql, opts(tag, { maxResultBytes: 10_000, keepJob: true }));
    expect(r.rows.length).toBeGreaterThan(0);
    expect(r.rows.length).toBeLessThan(10);
    expect(r).toMatchObject({ truncated: true, totalRows: 50 });
    const sent = await journal({ tag, op: 'query' });
    expect(sent).toHaveLength(1);
    expect(z.object({ jobCreationMode: z.string() }).parse(sent[0]?.body).jobCreationMode).toBe('JOB_CREATION_REQUIRED');
    expect(r.jobId).toBe(sent[0]?.answer?.jobId);
    expect(r.totalBytesBilled).toBe(Number(sent[0]?.answer?.totalBytesBilled));
    expect(await journal({ tag, op: 'insert' })).toHaveLength(0);
    const rest = await client.readPage({
      ...opts(tag),
      jobId: r.jobId ?? '',
      location: r.location ?? '',
      startIndex: r.rows.length,
      maxResults: 50,
    });
    expect(rest.rows.map((x) => x.order_id)).toHaveLength(50 - r.rows.length);
  });
});

describe('query: byte budget', () => {
  it('stops fetching pages at the budget and keeps the rows within it; the job stays for a cursor', { timeout: 60_000 }, async () => {
    const tag = newTag();
    // ~2 KB rows, 6,000 of them: ~12 MB in all, two warehouse pages; a 1 MiB budget keeps ~500 rows.
    const sql = `SELECT n, REPEAT('x', 2000) AS pad FROM UNNEST(GENERATE_ARRAY(1, 6000)) AS n ORDER BY n /* ${tag} */`;
    const r = await createWarehouseClient(env).query(sql, opts(tag, { rowCap: 10_000, maxResultBytes: 1024 * 1024 }));
    expect(r.truncated).toBe(true);
    expect(r.totalRows).toBe(6000);
    expect(r.rows.length).toBeGreaterThan(300);
    expect(r.rows.length).toBeLessThan(520);
    expect(r.rows.map((x) => x.n)).toEqual(Array.from({ length: r.rows.length }, (_, i) => i + 1));
    expect(JSON.stringify(r.rows).length).toBeLessThanOrEqual(1024 * 1024);
    expect(r.jobId).toMatch(/\S/);
    // The second page (another ~10 MB) was never fetched.
    expect((await journal({ op: 'getQueryResults', jobId: r.jobId ?? '' })).filter((p) => p.query.pageToken)).toHaveLength(0);
    const page = await createWarehouseClient(env).readPage({
      brandId: 'brand_acme',
      requestId: 'r',
      labels: {},
      jobId: r.jobId ?? '',
      location: 'US',
      startIndex: r.rows.length,
      maxResults: 10_000,
      maxResultBytes: 1024 * 1024,
    });
    expect(page.rows[0]).toMatchObject({ n: r.rows.length + 1 });
    expect(page.rows.length).toBeLessThan(520);
  });
});

describe('query: polling, deadline and cancel', () => {
  it('polls getQueryResults while jobComplete is false, then asks jobs.get for bytes billed', async () => {
    const tag = newTag();
    const sql = `SELECT COUNT(*) AS n, SUM(quantity) AS units FROM ${ORDERS}`;
    // Distinct texts, so neither run is served from the query cache.
    const direct = await createWarehouseClient(env).query(`${sql} /* ${newTag()} */`, opts(newTag()));
    await arm({ kind: 'jobIncomplete', count: 3, match: { label: { t: tag } } });
    const r = await createWarehouseClient(env).query(`${sql} /* ${tag} */`, opts(tag));
    expect(r.rows).toEqual(direct.rows);
    expect(r.totalBytesBilled).toBe(direct.totalBytesBilled);
    expect(r.totalBytesProcessed).toBe(direct.totalBytesProcessed);
    const polls = await journal({ op: 'getQueryResults', jobId: r.jobId ?? '' });
    expect(polls).toHaveLength(3);
    for (const p of polls)
      expect(p.query).toMatchObject({
        location: 'US',
        maxResults: '1000',
        timeoutMs: expect.stringMatching(/^\d+$/),
        'formatOptions.useInt64Timestamp': 'true',
      });
    expect(await journal({ op: 'get', jobId: r.jobId ?? '' })).toHaveLength(1);
  });

  it("when jobs.get fails, the rows still come back and bytes processed are billed at BigQuery's minimums (N3)", async () => {
    const tag = newTag();
    await arm({ kind: 'jobIncomplete', count: 1, match: { op: 'query', label: { t: tag } } });
    await arm({ kind: 'malformedJson', persistent: true, match: { op: 'get', label: { t: tag } } });
    const r = await createWarehouseClient(env, FAST).query(`SELECT SUM(quantity) AS units FROM ${ORDERS} /* ${tag} */`, opts(tag));
    expect(r.rows).toEqual([{ units: expect.any(Number) }]);
    expect(r.totalBytesProcessed).toBeGreaterThan(0);
    // One table read: rounded up to a MiB, at least 10 MiB (never less than BigQuery bills).
    expect(r.totalBytesBilled).toBe(Math.max(10 * MIB, Math.ceil(r.totalBytesProcessed / MIB) * MIB));
    expect((await journal({ op: 'get', jobId: r.jobId ?? '' })).map((g) => g.status)).toEqual([200]);
  });

  it('past the deadline cancels the job, fails with 504 WAREHOUSE_TIMEOUT, and counts what the job billed once it is DONE', async () => {
    const tag = newTag();
    // The job would need 3 s; the caller allows 1.2 s.
    await arm({ kind: 'slowJob', ms: 3000, match: { op: 'query', label: { t: tag } } });
    const started = Date.now();
    let late: Promise<number> | null = null;
    const sql = `SELECT SUM(quantity) AS n FROM ${ORDERS}`;
    const err = await failure(
      createWarehouseClient(env, { cancelTimeoutMs: 5000 }).query(
        `${sql} /* ${tag} */`,
        opts(tag, {
          timeoutMs: 1200,
          onLateBilling: (p) => {
            late = p;
          },
        }),
      ),
    );
    const elapsed = Date.now() - started;
    expect(err).toMatchObject({ code: 'WAREHOUSE_TIMEOUT', status: 504, details: { stage: 'warehouse', timeoutMs: 1200 } });
    expect(elapsed).toBeGreaterThanOrEqual(1100);
    const [sent] = await journal({ tag, op: 'query' });
    expect(QueryBody.parse(sent?.body).timeoutMs).toBeLessThanOrEqual(1200);
    // The job the deadline abandoned was cancelled (once, at its location) so it stops running and billing.
    const { jobId } = z.object({ jobId: z.string() }).parse(err.internal);
    const cancels = await journal({ op: 'cancel', jobId });
    expect(cancels.map((c) => [c.status, c.query.location])).toEqual([[200, 'US']]);
    // The 504 came at the deadline, not once the job had ended: it was cancelled while still running.
    expect(cancels[0]?.answer).toMatchObject({ state: 'RUNNING' });
    // jobs.cancel answered at once with the job still RUNNING (as BigQuery does); jobs.get was polled until DONE,
    // and the bytes it billed are what the usage count gets (the old client read 0 from the running job).
    const direct = await createWarehouseClient(env).query(`${sql} /* ${newTag()} */`, opts(newTag()));
    expect(await (late ?? Promise.resolve(-1))).toBe(direct.totalBytesBilled);
    expect(direct.totalBytesBilled).toBeGreaterThan(0);
    const gets = await journal({ op: 'get', jobId });
    expect(gets.length).toBeGreaterThanOrEqual(1);
  });

  it('settling an abandoned client-id job retries a jobs.get 404 (BigQuery may say so just after creating it) instead of counting 0 (N3)', async () => {
    const tag = newTag();
    await arm({ kind: 'slowJob', ms: 1500, match: { op: 'insert', label: { t: tag } } });
    await arm({ kind: 'notFound', count: 2, match: { op: 'get', label: { t: tag } } });
    let late: Promise<number> | null = null;
    const err = await failure(
      createWarehouseClient(env, { pollBackoff: { baseMs: 50, maxMs: 200 } }).query(
        `SELECT SUM(quantity) AS n FROM ${ORDERS} /* ${tag} */`,
        opts(tag, { timeoutMs: 600, requireJob: true, billedIfUnknown: 1, onLateBilling: (p) => (late = p) }),
      ),
    );
    expect(err).toMatchObject({ code: 'WAREHOUSE_TIMEOUT' });
    const billed = await (late ?? Promise.resolve(-1));
    const { jobId } = z.object({ jobId: z.string() }).parse(err.internal);
    const gets = await journal({ op: 'get', jobId });
    expect(gets.slice(0, 2).map((g) => g.status)).toEqual([404, 404]);
    expect(billed).toBe(Number(gets.at(-1)?.answer?.totalBytesBilled));
    expect(billed).toBeGreaterThan(0);
  });

  it('an abandoned job DONE without totalBytesBilled settles at its processed bytes at the minimums, not 0 (N3)', async () => {
    const tag = newTag();
    await arm({ kind: 'slowJob', ms: 1500, match: { op: 'query', label: { t: tag } } });
    await arm({ kind: 'noBilledBytes', persistent: true, match: { op: 'get', label: { t: tag } } });
    let late: Promise<number> | null = null;
    const err = await failure(
      createWarehouseClient(env, { pollBackoff: { baseMs: 50, maxMs: 200 } }).query(
        `SELECT SUM(quantity) AS n FROM ${ORDERS} /* ${tag} */`,
        opts(tag, { timeoutMs: 600, billedIfUnknown: 1, onLateBilling: (p) => (late = p) }),
      ),
    );
    expect(err).toMatchObject({ code: 'WAREHOUSE_TIMEOUT' });
    const billed = await (late ?? Promise.resolve(-1));
    expect(billed).toBeGreaterThanOrEqual(10 * MIB);
    expect(billed % MIB).toBe(0);
  });

  it('every job carries jobTimeoutMs, so the warehouse stops a job whose cancel never arrives', async () => {
    const tag = newTag();
    await arm({ kind: 'slowJob', ms: 5000, match: { op: 'query', label: { t: tag } } });
    await arm({ kind: 'dropConnection', persistent: true, match: { op: 'cancel', label: { t: tag } } });
    const background: Promise<unknown>[] = [];
    const client = createWarehouseClient(env, {
      jobTimeoutMarginMs: 300,
      cancelTimeoutMs: 300,
      settleTimeoutMs: 4000,
      waitUntil: (p) => background.push(p),
    });
    let late: Promise<number> | null = null;
    const err = await failure(
      client.query(
        `SELECT 3 AS x /* ${tag} */`,
        opts(tag, {
          timeoutMs: 600,
          onLateBilling: (p) => {
            late = p;
          },
        }),
      ),
    );
    expect(err).toMatchObject({ code: 'WAREHOUSE_TIMEOUT' });
    const [sent] = await journal({ tag, op: 'query' });
    expect(QueryBody.parse(sent?.body).jobTimeoutMs).toBe('900');
    await Promise.all(background);
    await late;
    const { jobId } = z.object({ jobId: z.string() }).parse(err.internal);
    expect((await journal({ op: 'cancel', jobId })).every((c) => c.status === null)).toBe(true);
    expect((await journal({ op: 'get', jobId })).at(-1)?.answer).toMatchObject({ state: 'DONE', errorReason: 'timeout' });
  });

  it('with waitUntil (the Worker), the 504 goes out at once and the cancel completes in the background', async () => {
    const tag = newTag();
    await arm({ kind: 'slowJob', ms: 2500, match: { op: 'query', label: { t: tag } } });
    const background: Promise<unknown>[] = [];
    let cancelled = false;
    const client = createWarehouseClient(env, {
      cancelTimeoutMs: 5000,
      waitUntil: (p) => background.push(p.finally(() => (cancelled = true))),
    });
    const err = await failure(client.query(`SELECT COUNT(*) AS n FROM ${ORDERS}`, opts(tag, { timeoutMs: 800 })));
    expect(err).toMatchObject({ code: 'WAREHOUSE_TIMEOUT', status: 504 });
    // "At once": the 504 did not wait for the cancel (still in flight when it arrived), whatever the machine's load.
    expect(cancelled).toBe(false);
    expect(background).toHaveLength(1);
    await Promise.all(background);
    const { jobId } = z.object({ jobId: z.string() }).parse(err.internal);
    expect((await journal({ op: 'cancel', jobId })).map((c) => c.status)).toEqual([200]);
  });

  it('an HTTP call hanging past the deadline is abandoned: 504 without waiting for the warehouse', async () => {
    const tag = newTag();
    await arm({ kind: 'latency', ms: 8000, match: { op: 'query', label: { t: tag } } });
    const err = await failure(createWarehouseClient(env, { graceMs: 200 }).query('SELECT 1 AS x', opts(tag, { timeoutMs: 800 })));
    expect(err).toMatchObject({ code: 'WAREHOUSE_TIMEOUT', status: 504 });
    // Abandoned, not waited for: the warehouse had not answered the call when the 504 came.
    const calls = await journal({ tag, op: 'query' });
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((c) => c.status === null)).toBe(true);
  });
});

describe('query: polling that cannot flood', () => {
  it('a job that stays incomplete (answered at once, long poll ignored) is polled a few times a second at most, then a coded 504', async () => {
    const tag = newTag();
    await arm({ kind: 'jobIncomplete', persistent: true, match: { label: { t: tag } } });
    const started = Date.now();
    const err = await failure(createWarehouseClient(env, { cancelTimeoutMs: 3000 }).query('SELECT 1 AS x', opts(tag, { timeoutMs: 3000 })));
    const elapsedS = (Date.now() - started) / 1000;
    expect(err).toMatchObject({ code: 'WAREHOUSE_TIMEOUT', status: 504, details: { stage: 'warehouse', timeoutMs: 3000 } });
    expect(err.message).toMatch(/cancellation was requested/);
    const { jobId } = z.object({ jobId: z.string() }).parse(err.internal);
    const polls = await journal({ op: 'getQueryResults', jobId });
    expect(polls.length).toBeGreaterThanOrEqual(2);
    // Backoff with jitter from 250 ms doubling to 2 s: about 5 polls in 3 s, never hundreds.
    expect(polls.length / elapsedS).toBeLessThanOrEqual(4);
    for (const p of polls) expect(Number(p.query.timeoutMs)).toBeGreaterThan(0);
    expect((await journal({ op: 'cancel', jobId })).map((c) => c.status)).toEqual([200]);
  });

  it('polls per query are capped: past maxPolls the query ends in a coded 504 that says so', async () => {
    const tag = newTag();
    await arm({ kind: 'jobIncomplete', persistent: true, match: { label: { t: tag } } });
    const client = createWarehouseClient(env, { maxPolls: 3, pollBackoff: { baseMs: 10, maxMs: 20 } });
    const err = await failure(client.query('SELECT 1 AS x', opts(tag)));
    expect(err).toMatchObject({ code: 'WAREHOUSE_TIMEOUT', status: 504 });
    expect(err.message).toMatch(/still running after 3 polls/);
    const { jobId } = z.object({ jobId: z.string() }).parse(err.internal);
    expect(await journal({ op: 'getQueryResults', jobId })).toHaveLength(3);
  });

  it('a deadline before the job id is known: the message claims no cancellation, nothing is resent, and the estimate is counted', async () => {
    const tag = newTag();
    await arm({ kind: 'latency', ms: 4000, count: 1, match: { op: 'query', label: { t: tag } } });
    const background: Promise<unknown>[] = [];
    let late: Promise<number> | null = null;
    const client = createWarehouseClient(env, { graceMs: 200, waitUntil: (p) => background.push(p) });
    const err = await failure(
      client.query(
        `SELECT order_id FROM ${ORDERS}`,
        opts(tag, {
          timeoutMs: 800,
          billedIfUnknown: 4_242,
          onLateBilling: (p) => {
            late = p;
          },
        }),
      ),
    );
    expect(err).toMatchObject({ code: 'WAREHOUSE_TIMEOUT', status: 504 });
    expect(err.message).not.toMatch(/cancel/i);
    expect(err.message).toMatch(/may still run/);
    await Promise.all(background);
    // No job id to find it by (a resent SELECT would be a second job): jobTimeoutMs stops it, the estimate is counted.
    expect(await (late ?? Promise.resolve(-1))).toBe(4_242);
    expect(await journal({ tag, op: 'query' })).toHaveLength(1);
  });
});

describe('readPage', () => {
  it('reads any page of a finished job by startIndex, with the brand account, billing nothing', async () => {
    const tag = newTag();
    const client = createWarehouseClient(env);
    const sql = `SELECT order_id FROM ${ORDERS} ORDER BY order_id LIMIT 300`;
    const r = await client.query(sql, opts(tag, { rowCap: 100 }));
    expect(r).toMatchObject({ truncated: true, totalRows: 300, location: 'US' });
    const page = await client.readPage({
      brandId: 'brand_acme',
      requestId: 'r',
      labels: {},
      jobId: r.jobId ?? '',
      location: r.location ?? '',
      startIndex: 100,
      maxResults: 150,
    });
    expect(page.totalRows).toBe(300);
    expect(page.rows).toHaveLength(150);
    const all = await client.query(sql, opts(newTag(), { rowCap: 1000 }));
    expect(page.rows).toEqual(all.rows.slice(100, 250));
    const [read] = (await journal({ op: 'getQueryResults', jobId: r.jobId ?? '' })).filter((q) => q.query.startIndex === '100');
    expect(read?.query).toMatchObject({ location: 'US', maxResults: '150', 'formatOptions.useInt64Timestamp': 'true' });
  });
});

describe('credentials', () => {
  const mainAccount = z
    .object({ client_email: z.string(), private_key_id: z.string(), private_key: z.string() })
    .parse(JSON.parse(env.GCP_SERVICE_ACCOUNT_JSON ?? ''));

  it('a token signed with another key is refused (401) and surfaces as 502 WAREHOUSE_ERROR', async () => {
    const tag = newTag();
    const { pem } = await newKeyPair();
    const impostor = JSON.stringify({ ...mainAccount, type: 'service_account', private_key: pem });
    const err = await failure(
      createWarehouseClient({ ...env, GCP_SERVICE_ACCOUNT_JSON: impostor }, FAST).query('SELECT 1 AS x', opts(tag)),
    );
    expect(err).toMatchObject({ code: 'WAREHOUSE_ERROR', status: 502 });
    const sent = await journal({ tag, op: 'query' });
    expect(sent.map((s) => [s.status, s.auth])).toEqual([[401, { ok: false, why: 'bad signature' }]]);
  });

  it('reuses one token per credential, replaces it 5 minutes before expiry, and never sends an expired one', async () => {
    const seen: string[] = [];
    const recordingFetch: typeof fetch = (input, init) => {
      seen.push(new Headers(init?.headers).get('authorization') ?? '');
      return fetch(input, init);
    };
    const real = Date.now();
    let clock = real - 58 * 60_000;
    const client = createWarehouseClient(env, { fetch: recordingFetch, now: () => clock });
    await client.query('SELECT 1 AS x', opts(newTag()));
    clock = real - 54 * 60_000;
    await client.query('SELECT 1 AS x', opts(newTag()));
    expect(seen).toHaveLength(2);
    expect(seen[1]).toBe(seen[0]);
    // 58 minutes after signing (2 minutes before exp): a fresh token, which the warehouse accepts.
    clock = real;
    await client.query('SELECT 1 AS x', opts(newTag()));
    expect(seen[2]).not.toBe(seen[0]);
    expect(jwtPart((seen[0] ?? '').replace(/^Bearer /, ''), 1)).toMatchObject({ iat: Math.floor((real - 58 * 60_000) / 1000) });
    expect(jwtPart((seen[2] ?? '').replace(/^Bearer /, ''), 1)).toMatchObject({
      iat: Math.floor(real / 1000),
      exp: Math.floor(real / 1000) + 3600,
    });
  });

  it('a token the warehouse considers expired (client clock 2 h behind) is 502 WAREHOUSE_ERROR, not retried', async () => {
    const tag = newTag();
    const err = await failure(
      createWarehouseClient(env, { ...FAST, now: () => Date.now() - 2 * 3600_000 }).query('SELECT 1 AS x', opts(tag)),
    );
    expect(err).toMatchObject({ code: 'WAREHOUSE_ERROR', status: 502 });
    expect((await journal({ tag, op: 'query' })).map((s) => s.auth)).toEqual([{ ok: false, why: 'token expired' }]);
  });

  it("a cursor page read after the brand's credential changed is 'result gone', not FORBIDDEN_TABLE (N9)", async () => {
    const tag = newTag();
    // Run with the default account; the brand then gets its own (the result table belongs to the old one).
    const r = await createWarehouseClient(env).query(`SELECT order_id FROM ${ORDERS} LIMIT 3 /* ${tag} */`, opts(tag, { keepJob: true }));
    expect(r.jobId).toMatch(/\S/);
    const perBrand = createWarehouseClient({ ...env, GCP_SERVICE_ACCOUNTS_BY_BRAND: inject('serviceAccountsByBrandJson') });
    const err = await failure(
      perBrand.readPage({ ...opts(tag), jobId: r.jobId ?? '', location: r.location ?? '', startIndex: 1, maxResults: 2 }),
    );
    expect(err).toMatchObject({ code: 'VALIDATION', status: 400, details: { issues: [{ path: 'cursor' }] } });
  });

  it("signs with the brand's own account when one is configured; IAM then keeps it to its dataset", async () => {
    const perBrand = { ...env, GCP_SERVICE_ACCOUNTS_BY_BRAND: inject('serviceAccountsByBrandJson') };
    const client = createWarehouseClient(perBrand);
    const own = newTag();
    const r = await client.query(`SELECT COUNT(*) AS n FROM ${ORDERS}`, opts(own));
    expect(r.rows).toEqual([{ n: 500_000 }]);
    expect((await journal({ tag: own, op: 'query' }))[0]?.auth).toEqual({ ok: true, iss: `brand-acme@${P}.iam.gserviceaccount.com` });

    const other = newTag();
    const err = await failure(client.query(`SELECT COUNT(*) AS n FROM \`${P}.globex.fact__orders\``, opts(other)));
    expect(err).toMatchObject({ code: 'FORBIDDEN_TABLE', status: 403, details: { reason: 'accessDenied' } });

    // A brand without its own entry falls back to the default account.
    const fallback = newTag();
    await client.query('SELECT 1 AS x', opts(fallback, { brandId: 'brand_initech' }));
    expect((await journal({ tag: fallback, op: 'query' }))[0]?.auth).toEqual({ ok: true, iss: mainAccount.client_email });
  });
});

describe('jobs that outlive the call (a long query takes them over)', () => {
  it('query with leaveRunning: past the deadline the job is not cancelled; JobStillRunning names it, and it finishes', async () => {
    const tag = newTag();
    await arm({ kind: 'slowJob', ms: 1500, match: { op: 'query', label: { t: tag } } });
    const client = createWarehouseClient(env, { pollBackoff: { baseMs: 50, maxMs: 200 } });
    const sql = `SELECT SUM(quantity) AS n FROM ${ORDERS} /* ${tag} */`;
    const err = await client.query(sql, opts(tag, { timeoutMs: 400, keepJob: true, leaveRunning: true, jobTimeoutMs: 60_000 })).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(JobStillRunning);
    const { job } = err as JobStillRunning;
    const [sent] = await journal({ tag, op: 'query' });
    expect(sent?.answer?.jobId).toBe(job.jobId);
    expect(sent?.body).toMatchObject({ jobCreationMode: 'JOB_CREATION_REQUIRED', jobTimeoutMs: '60000' });
    expect(await journal({ op: 'cancel', jobId: job.jobId })).toEqual([]);
    // Left running, it ends on its own, billed once; its owner reads it as any kept job.
    const done = await client.awaitJob(job, opts(tag, { timeoutMs: 10_000 }));
    expect(done.rows).toHaveLength(1);
    expect(done.totalBytesBilled).toBeGreaterThan(0);
  });

  it('awaitJob with bytesAskedElsewhere reads the result without the jobs.get its caller makes next', async () => {
    const tag = newTag();
    await arm({ kind: 'slowJob', ms: 300, match: { op: 'insert', label: { t: tag } } });
    const client = createWarehouseClient(env);
    const job = await client.submitJob(`SELECT SUM(quantity) AS n FROM ${ORDERS} /* ${tag} */`, opts(tag));
    const done = await client.awaitJob(job, opts(tag, { rowCap: 1, bytesAskedElsewhere: true }));
    expect(done.totalRows).toBe(1);
    expect((await journal({ op: 'getQueryResults', jobId: job.jobId })).length).toBeGreaterThanOrEqual(1);
    expect(await journal({ op: 'get', jobId: job.jobId })).toEqual([]);
    // Without it, the bytes come from the one jobs.get.
    await client.awaitJob(job, opts(tag, { rowCap: 1 }));
    expect(await journal({ op: 'get', jobId: job.jobId })).toHaveLength(1);
  });
});
