// The local warehouse's BigQuery REST surface: auth, dry runs, type encoding, paging, the byte ceiling,
// errors and the job lifecycle, asserted on what a BigQuery client reads off the wire.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createServiceAccount, signServiceAccountJwt } from '../../dev/warehouse/service-account.mjs';
import { API, rowsOf, startTestWarehouse } from './warehouse-helpers.mjs';

const MIB = 1024 * 1024;
let t;
let other; // an account the warehouse does not trust
let acmeOnly; // trusted for the acme dataset only

beforeAll(async () => {
  acmeOnly = createServiceAccount({ clientEmail: 'brand-acme@service-v1.iam.gserviceaccount.com' });
  t = await startTestWarehouse({
    extraAccounts: [{ clientEmail: acmeOnly.clientEmail, publicKeyPem: acmeOnly.publicKeyPem, keyId: acmeOnly.keyId, datasets: ['acme'] }],
  });
  t.mainJson = t.sa.json;
  other = createServiceAccount();
});

afterAll(async () => {
  await t?.wh.close();
});

async function withToken(token, body = { query: 'SELECT 1', useLegacySql: false }) {
  const res = await fetch(`${t.wh.url}${API}/queries`, {
    method: 'POST',
    headers: token === null ? { 'content-type': 'application/json' } : { authorization: token, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

describe('bearer auth (self-signed service-account JWT)', () => {
  const now = () => Math.floor(Date.now() / 1000);
  /** @type {[string, () => string | null, string][]} */
  const cases = [
    ['no Authorization header', () => null, 'required'],
    ['a non-bearer scheme', () => 'Basic Zm9vOmJhcg==', 'required'],
    ['a token that is not a JWT', () => 'Bearer not-a-jwt', 'authError'],
    ['a key the warehouse does not trust', () => `Bearer ${signServiceAccountJwt(other.json)}`, 'authError'],
    ['an expired token', () => `Bearer ${signServiceAccountJwt(t.mainJson, { nowSeconds: now() - 7200 })}`, 'authError'],
    ['a lifetime over one hour', () => `Bearer ${signServiceAccountJwt(t.mainJson, { lifetimeSeconds: 3601 })}`, 'authError'],
    [
      'the wrong audience',
      () => `Bearer ${signServiceAccountJwt(t.mainJson, { audience: 'https://oauth2.googleapis.com/token' })}`,
      'authError',
    ],
    ['a kid that is not the key id', () => `Bearer ${signServiceAccountJwt(t.mainJson, { keyId: 'some-other-key' })}`, 'authError'],
    [
      'sub different from iss',
      () => `Bearer ${signServiceAccountJwt(t.mainJson, { claims: { sub: 'someone@example.com' } })}`,
      'authError',
    ],
    ['a token issued in the future', () => `Bearer ${signServiceAccountJwt(t.mainJson, { nowSeconds: now() + 600 })}`, 'authError'],
    // AIP-4111: a self-signed JWT names its audience or its scopes, never both, and the scopes must cover BigQuery.
    [
      'both aud and scope',
      () => `Bearer ${signServiceAccountJwt(t.mainJson, { claims: { scope: 'https://www.googleapis.com/auth/bigquery' } })}`,
      'authError',
    ],
    [
      'a scope that does not cover BigQuery',
      () => `Bearer ${signServiceAccountJwt(t.mainJson, { scope: 'https://www.googleapis.com/auth/devstorage.read_only' })}`,
      'authError',
    ],
  ];
  it.each(cases)("refuses %s with 401 in BigQuery's shape", async (_, header, reason) => {
    const r = await withToken(header());
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe(401);
    expect(r.body.error.status).toBe('UNAUTHENTICATED');
    expect(r.body.error.errors[0].reason).toBe(reason);
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('refuses a token whose signature was tampered with', async () => {
    const [h, c, s] = signServiceAccountJwt(t.mainJson).split('.');
    const claims = JSON.parse(Buffer.from(c, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 1 })).toString('base64url');
    const r = await withToken(`Bearer ${h}.${forged}.${s}`);
    expect(r.status).toBe(401);
    expect(r.headers.get('x-local-warehouse-auth')).toBe('bad signature');
  });

  it('accepts a valid token and answers the query', async () => {
    const r = await withToken(`Bearer ${t.token}`);
    expect(r.status).toBe(200);
    expect(r.body.rows).toEqual([{ f: [{ v: '1' }] }]);
  });

  it.each(['https://www.googleapis.com/auth/bigquery', 'openid https://www.googleapis.com/auth/cloud-platform'])(
    'accepts a token with the scope claim %s and no aud (AIP-4111), which no endpoint name can break',
    async (scope) => {
      const r = await withToken(`Bearer ${signServiceAccountJwt(t.mainJson, { scope })}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.rows).toEqual([{ f: [{ v: '1' }] }]);
    },
  );
});

describe('jobs.insert dry run', () => {
  it('reports statement type, referenced tables and bytes from the referenced columns', async () => {
    const r = await t.dryRun('SELECT order_date, quantity FROM `service-v1.acme.fact__orders` WHERE channel = "web"');
    expect(r.status).toBe(200);
    const q = r.body.statistics.query;
    expect(q.statementType).toBe('SELECT');
    expect(q.referencedTables).toEqual([{ projectId: 'service-v1', datasetId: 'acme', tableId: 'fact__orders' }]);
    expect(q.referencedRoutines).toBeUndefined();
    // order_date (DATE) and quantity (INT64) are 8 bytes x 500,000 rows each; channel is 2 bytes + its text.
    const twoFixedColumns = 2 * 8 * 500_000;
    expect(Number(q.totalBytesProcessed)).toBeGreaterThan(twoFixedColumns + 2 * 500_000);
    expect(r.body.statistics.totalBytesProcessed).toBe(q.totalBytesProcessed);
    expect(typeof q.totalBytesProcessed).toBe('string');
    expect(r.body.jobReference).toEqual({ projectId: 'service-v1', location: 'US' });
    expect(r.body.status).toEqual({ state: 'DONE' });
    expect(q.schema.fields.map((f) => [f.name, f.type])).toEqual([
      ['order_date', 'DATE'],
      ['quantity', 'INTEGER'],
    ]);
  });

  it('bills only the columns used: two 8-byte columns of 500,000 rows are exactly 8,000,000 bytes', async () => {
    const r = await t.dryRun('SELECT order_date, quantity FROM `service-v1.acme.fact__orders`');
    expect(r.body.statistics.query.totalBytesProcessed).toBe('8000000');
    const star = await t.dryRun('SELECT * FROM `service-v1.acme.fact__orders`');
    expect(Number(star.body.statistics.query.totalBytesProcessed)).toBeGreaterThan(8_000_000);
    const count = await t.dryRun('SELECT COUNT(*) FROM `service-v1.acme.fact__orders`');
    expect(count.body.statistics.query.totalBytesProcessed).toBe('0');
  });

  it('bills every column of a table read through its row alias, as Google does, also inside a scalar subquery', async () => {
    const M = '`service-v1.acme.table_metadata`';
    const bytes = async (sql) => {
      const r = await t.dryRun(sql);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return Number(r.body.statistics.query.totalBytesProcessed);
    };
    const star = await bytes(`SELECT * FROM ${M}`);
    expect(star).toBeGreaterThan(0);
    // Each reads the whole row and used to bill 0 bytes here (only named columns were counted).
    expect(await bytes(`SELECT TO_JSON_STRING(t) AS j FROM ${M} t`)).toBe(star);
    expect(await bytes(`SELECT TO_JSON_STRING(table_metadata) AS j FROM ${M}`)).toBe(star);
    expect(await bytes(`SELECT t FROM ${M} AS t`)).toBe(star);
    expect(await bytes(`SELECT (SELECT TO_JSON_STRING(t)) AS j FROM ${M} t`)).toBe(star);
    expect(await bytes(`SELECT ARRAY(SELECT AS STRUCT t FROM ${M} t) AS a`)).toBe(star);
    const orders = await bytes('SELECT * FROM `service-v1.acme.fact__orders`');
    expect(await bytes('SELECT (SELECT x FROM UNNEST([o]) x LIMIT 1).order_id AS id FROM `service-v1.acme.fact__orders` o LIMIT 1')).toBe(
      orders,
    );
    // A wildcard's alias is the row of every matched shard.
    const shards = await bytes('SELECT * FROM `service-v1.umbrella.events_*`');
    expect(await bytes('SELECT TO_JSON_STRING(e) AS j FROM `service-v1.umbrella.events_*` e')).toBe(shards);
    // A scalar subquery's own columns are billed; a qualified column is still just that column.
    expect(await bytes('SELECT (SELECT MAX(revenue) FROM `service-v1.acme.fact__orders`) AS m')).toBe(4_000_000);
    expect(await bytes('SELECT o.quantity FROM `service-v1.acme.fact__orders` o')).toBe(4_000_000);
  });

  it('lists every table of joins, subqueries and CTEs once, and routines when called', async () => {
    const r = await t.dryRun(`WITH c AS (SELECT * FROM \`service-v1.acme.dim__customers\`)
      SELECT \`service-v1.acme.order_size_band\`(o.quantity), c.country
      FROM \`service-v1.acme.fact__orders\` o JOIN c USING (customer_id)
      WHERE o.product_id IN (SELECT product_id FROM service-v1.acme.dim__products)`);
    expect(r.status).toBe(200);
    const tables = r.body.statistics.query.referencedTables.map((x) => x.tableId).sort();
    expect(tables).toEqual(['dim__customers', 'dim__products', 'fact__orders']);
    expect(r.body.statistics.query.referencedRoutines).toEqual([
      { projectId: 'service-v1', datasetId: 'acme', routineId: 'order_size_band' },
    ]);
  });

  it('reports other datasets as they are referenced, so the caller can refuse them', async () => {
    const r = await t.dryRun('SELECT 1 FROM `service-v1.acme.fact__orders` a, `service-v1.globex.fact__orders` g LIMIT 1');
    expect(r.body.statistics.query.referencedTables.map((x) => x.datasetId).sort()).toEqual(['acme', 'globex']);
  });

  it.each([
    ['DELETE FROM `service-v1.acme.fact__orders` WHERE TRUE', 'DELETE'],
    ['INSERT INTO `service-v1.acme.fact__orders` (order_id) VALUES ("x")', 'INSERT'],
    ['CREATE TABLE `service-v1.acme.x` AS SELECT 1 AS a', 'CREATE_TABLE_AS_SELECT'],
    ['DROP TABLE `service-v1.acme.fact__orders`', 'DROP_TABLE'],
    ['SELECT 1; SELECT 2', 'SCRIPT'],
    ['(SELECT 1)', 'SELECT'],
    ['WITH a AS (SELECT 1 AS x) SELECT x FROM a', 'SELECT'],
  ])('classifies %s as %s', async (sql, type) => {
    const r = await t.dryRun(sql);
    expect(r.status).toBe(200);
    expect(r.body.statistics.query.statementType).toBe(type);
  });

  it('does not list INFORMATION_SCHEMA views as tables, and answers their columns with BigQuery type names', async () => {
    const sql =
      "SELECT column_name, data_type FROM `service-v1.acme.INFORMATION_SCHEMA.COLUMNS` WHERE table_name = 'fact__orders' ORDER BY ordinal_position";
    const dry = await t.dryRun(sql);
    expect(dry.body.statistics.query.referencedTables).toBeUndefined();
    const r = await t.query(sql);
    expect(rowsOf(r.body)).toEqual([
      { column_name: 'order_id', data_type: 'STRING' },
      { column_name: 'order_date', data_type: 'DATE' },
      { column_name: 'order_ts', data_type: 'TIMESTAMP' },
      { column_name: 'customer_id', data_type: 'STRING' },
      { column_name: 'product_id', data_type: 'STRING' },
      { column_name: 'channel', data_type: 'STRING' },
      { column_name: 'quantity', data_type: 'INT64' },
      { column_name: 'revenue', data_type: 'FLOAT64' },
      { column_name: 'currency', data_type: 'STRING' },
    ]);
  });
});

describe('jobs.query result encoding', () => {
  it('encodes every BigQuery type as BigQuery does', async () => {
    const r = await t.query(`SELECT
      42 AS i, -1.5 AS f, NUMERIC '12.50' AS n, BIGNUMERIC '1.25' AS bn, TRUE AS b, 'héllo' AS s, b'\\x00\\xff' AS by,
      DATE '2024-02-29' AS d, DATETIME '2024-02-29 13:14:15.123456' AS dt, TIME '07:08:09' AS tm,
      TIMESTAMP '2024-02-29 13:14:15.5+00' AS ts, JSON '{"a": [1, 2]}' AS j, INTERVAL 3 DAY AS iv,
      [1, 2, 3] AS arr, STRUCT(1 AS x, 'y' AS y) AS st, [STRUCT(1 AS x), STRUCT(2 AS x)] AS arr_st,
      CAST(NULL AS STRING) AS nul, COUNT(*) AS cnt, IEEE_DIVIDE(1, 0) AS big, IEEE_DIVIDE(0, 0) AS nan`);
    expect(r.status).toBe(200);
    const fields = Object.fromEntries(r.body.schema.fields.map((f) => [f.name, f]));
    const types = Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, `${f.type}/${f.mode}`]));
    expect(types).toEqual({
      i: 'INTEGER/NULLABLE',
      f: 'FLOAT/NULLABLE',
      n: 'NUMERIC/NULLABLE',
      bn: 'BIGNUMERIC/NULLABLE',
      b: 'BOOLEAN/NULLABLE',
      s: 'STRING/NULLABLE',
      by: 'BYTES/NULLABLE',
      d: 'DATE/NULLABLE',
      dt: 'DATETIME/NULLABLE',
      tm: 'TIME/NULLABLE',
      ts: 'TIMESTAMP/NULLABLE',
      j: 'JSON/NULLABLE',
      iv: 'INTERVAL/NULLABLE',
      arr: 'INTEGER/REPEATED',
      st: 'RECORD/NULLABLE',
      arr_st: 'RECORD/REPEATED',
      nul: 'STRING/NULLABLE',
      cnt: 'INTEGER/NULLABLE',
      big: 'FLOAT/NULLABLE',
      nan: 'FLOAT/NULLABLE',
    });
    expect(fields.st.fields).toEqual([
      { name: 'x', type: 'INTEGER', mode: 'NULLABLE' },
      { name: 'y', type: 'STRING', mode: 'NULLABLE' },
    ]);
    const v = Object.fromEntries(r.body.schema.fields.map((f, i) => [f.name, r.body.rows[0].f[i].v]));
    expect(v).toEqual({
      i: '42',
      f: '-1.5',
      n: '12.5',
      bn: '1.25',
      b: 'true',
      s: 'héllo',
      by: Buffer.from([0, 255]).toString('base64'),
      d: '2024-02-29',
      dt: '2024-02-29T13:14:15.123456',
      tm: '07:08:09',
      ts: '1.7092124555E9',
      j: '{"a":[1,2]}',
      iv: '0-0 3 0:0:0',
      arr: [{ v: '1' }, { v: '2' }, { v: '3' }],
      st: { f: [{ v: '1' }, { v: 'y' }] },
      arr_st: [{ v: { f: [{ v: '1' }] } }, { v: { f: [{ v: '2' }] } }],
      nul: null,
      cnt: '1',
      big: 'Infinity',
      nan: 'NaN',
    });
    expect(r.body.totalRows).toBe('1');
    expect(r.body.jobComplete).toBe(true);
    expect(r.body.cacheHit).toBe(false);
  });

  it('sends TIMESTAMP as int64 microseconds when formatOptions.useInt64Timestamp is set', async () => {
    const r = await t.query("SELECT TIMESTAMP '2024-02-29 13:14:15.123456+00' AS ts", { formatOptions: { useInt64Timestamp: true } });
    expect(r.body.rows[0].f[0].v).toBe('1709212455123456');
  });

  it('names unaliased expressions f0_, f1_ and keeps column names', async () => {
    const r = await t.query(
      'SELECT channel, COUNT(*), SUM(quantity) AS units, MAX(revenue) FROM `service-v1.globex.fact__orders` GROUP BY channel ORDER BY channel',
    );
    expect(r.body.schema.fields.map((f) => f.name)).toEqual(['channel', 'f0_', 'units', 'f1_']);
  });

  it('formats floats the way BigQuery (Java) does', async () => {
    const r = await t.query('SELECT 100.0 AS a, 0.0001 AS b, 12345678.9 AS c, 0.5 AS d, -0.0 AS e');
    expect(r.body.rows[0].f.map((c) => c.v)).toEqual(['100.0', '1.0E-4', '1.23456789E7', '0.5', '-0.0']);
  });
});

describe('paging', () => {
  const sql = 'SELECT order_id FROM `service-v1.globex.fact__orders` WHERE order_id <= "ORD-0002500" ORDER BY order_id';

  it('pages with maxResults and pageToken through getQueryResults, losing and repeating nothing', async () => {
    const first = await t.query(sql, { maxResults: 1000 });
    expect(first.body.totalRows).toBe('2500');
    expect(first.body.rows).toHaveLength(1000);
    const ids = rowsOf(first.body).map((r) => r.order_id);
    let token = first.body.pageToken;
    const jobId = first.body.jobReference.jobId;
    let pages = 1;
    while (token) {
      const page = await t.call('GET', `${API}/queries/${jobId}?maxResults=1000&pageToken=${encodeURIComponent(token)}&location=US`);
      expect(page.status).toBe(200);
      expect(page.body.kind).toBe('bigquery#getQueryResultsResponse');
      expect(page.body.totalBytesBilled).toBeUndefined();
      ids.push(...rowsOf(page.body).map((r) => r.order_id));
      token = page.body.pageToken;
      pages++;
    }
    expect(pages).toBe(3);
    expect(ids).toHaveLength(2500);
    expect(new Set(ids).size).toBe(2500);
    expect(ids[0]).toBe('ORD-0000001');
    expect(ids[2499]).toBe('ORD-0002500');
  });

  it('starts a page at startIndex', async () => {
    const first = await t.query(sql, { maxResults: 10 });
    const page = await t.call('GET', `${API}/queries/${first.body.jobReference.jobId}?startIndex=2490&maxResults=100`);
    expect(rowsOf(page.body).map((r) => r.order_id)).toEqual(
      Array.from({ length: 10 }, (_, i) => `ORD-${String(2491 + i).padStart(7, '0')}`),
    );
    expect(page.body.pageToken).toBeUndefined();
  });

  it("continues from startIndex with the pageToken it answers, as BigQuery does (the Worker's result cursors read this way)", async () => {
    const first = await t.query(sql, { maxResults: 10 });
    const jobId = first.body.jobReference.jobId;
    const mid = await t.call('GET', `${API}/queries/${jobId}?startIndex=1200&maxResults=500&location=US&timeoutMs=0`);
    expect(mid.body).toMatchObject({ jobComplete: true, totalRows: '2500' });
    const ids = rowsOf(mid.body).map((r) => r.order_id);
    expect(ids[0]).toBe('ORD-0001201');
    expect(ids).toHaveLength(500);
    const next = await t.call('GET', `${API}/queries/${jobId}?maxResults=500&pageToken=${encodeURIComponent(mid.body.pageToken)}`);
    expect(rowsOf(next.body)[0].order_id).toBe('ORD-0001701');
    const end = await t.call('GET', `${API}/queries/${jobId}?startIndex=2500&maxResults=10`);
    expect(end.body.rows).toBeUndefined();
    expect(end.body.pageToken).toBeUndefined();
    // Reading pages starts no job: the journal holds the page reads of this job and no other operation on it.
    const onJob = t.wh.requests.list({}).filter((e) => e.path.includes(jobId));
    expect(onJob.map((e) => e.op)).toEqual(['getQueryResults', 'getQueryResults', 'getQueryResults']);
  });

  it('omits rows and pageToken for an empty result', async () => {
    const r = await t.query('SELECT order_id FROM `service-v1.globex.fact__orders` WHERE FALSE');
    expect(r.body.totalRows).toBe('0');
    expect(r.body.rows).toBeUndefined();
    expect(r.body.pageToken).toBeUndefined();
  });

  it('refuses a page token from another job', async () => {
    const a = await t.query(sql, { maxResults: 10 });
    const b = await t.query(sql, { maxResults: 10 });
    const r = await t.call('GET', `${API}/queries/${b.body.jobReference.jobId}?pageToken=${a.body.pageToken}`);
    expect(r.status).toBe(400);
    expect(r.body.error.errors[0].reason).toBe('invalid');
  });
});

describe('byte ceiling (maximumBytesBilled)', () => {
  const sql = 'SELECT order_date, quantity FROM `service-v1.acme.fact__orders` LIMIT 1';

  it("refuses a query that would bill more, with BigQuery's bytesBilledLimitExceeded", async () => {
    const r = await t.query(sql, { maximumBytesBilled: String(5 * MIB) });
    expect(r.status).toBe(400);
    expect(r.body.error.errors[0].reason).toBe('bytesBilledLimitExceeded');
    expect(r.body.error.message).toBe(`Query exceeded limit for bytes billed: ${5 * MIB}. ${10 * MIB} or higher required.`);
  });

  it('runs at the ceiling and bills at least 10 MiB per table, rounded up to a MiB', async () => {
    const r = await t.query(sql, { maximumBytesBilled: String(10 * MIB) });
    expect(r.status).toBe(200);
    expect(r.body.totalBytesProcessed).toBe('8000000');
    expect(r.body.totalBytesBilled).toBe(String(10 * MIB));
    const big = await t.query('SELECT * FROM `service-v1.acme.fact__orders` LIMIT 1');
    const processed = Number(big.body.totalBytesProcessed);
    expect(Number(big.body.totalBytesBilled)).toBe(Math.ceil(processed / MIB) * MIB);
  });

  it('bills nothing when no table bytes are read', async () => {
    const r = await t.query('SELECT COUNT(*) AS n FROM `service-v1.acme.fact__orders`', { maximumBytesBilled: '1' });
    expect(r.status).toBe(200);
    expect(r.body.totalBytesBilled).toBe('0');
    expect(rowsOf(r.body)).toEqual([{ n: '500000' }]);
  });
});

describe('errors', () => {
  it("answers a SQL error with invalidQuery located in the user's own SQL", async () => {
    const r = await t.query('SELECT\n  revnue\nFROM `service-v1.acme.fact__orders`');
    expect(r.status).toBe(400);
    expect(r.body.error.errors[0].reason).toBe('invalidQuery');
    expect(r.body.error.message).toBe('Unrecognized name: revnue; Did you mean revenue? at [2:3]');
  });

  it.each([
    ['SELECT FROM WHERE', /^Syntax error: .* at \[1:\d+\]$/],
    ["SELECT 'unclosed", /^Syntax error: Unclosed string literal at \[1:8\]$/],
    ['SELECT nope_fn(1)', /^Function not found: nope_fn at \[1:8\]$/],
    ['SELECT channel, COUNT(*) FROM `service-v1.acme.fact__orders`', /neither grouped nor aggregated/],
    ["SELECT CAST('abc' AS INT64)", /^Bad int64 value: abc/],
    ['SELECT * FROM fact__orders', /^Table "fact__orders" must be qualified with a dataset/],
  ])('%s -> 400 invalidQuery', async (sql, message) => {
    const r = await t.query(sql);
    expect(r.status).toBe(400);
    expect(r.body.error.errors[0].reason).toBe('invalidQuery');
    expect(r.body.error.message).toMatch(message);
  });

  it.each([
    ['SELECT * FROM `service-v1.acme.nope`', 'Not found: Table service-v1:acme.nope was not found in location US'],
    ['SELECT * FROM `service-v1.nope.fact__orders`', 'Not found: Dataset service-v1:nope was not found in location US'],
  ])('%s -> 404 notFound', async (sql, message) => {
    const r = await t.query(sql);
    expect(r.status).toBe(404);
    expect(r.body.error.errors[0].reason).toBe('notFound');
    expect(r.body.error.message).toBe(message);
  });

  it("denies another project's tables with accessDenied", async () => {
    const r = await t.query('SELECT * FROM `other-project.acme.fact__orders`');
    expect(r.status).toBe(403);
    expect(r.body.error.errors[0].reason).toBe('accessDenied');
  });

  it('limits an account to its datasets (IAM per brand)', async () => {
    const token = signServiceAccountJwt(acmeOnly.json);
    const own = await withToken(`Bearer ${token}`, { query: 'SELECT COUNT(*) FROM `service-v1.acme.fact__orders`', useLegacySql: false });
    expect(own.status).toBe(200);
    const foreign = await withToken(`Bearer ${token}`, {
      query: 'SELECT COUNT(*) FROM `service-v1.globex.fact__orders`',
      useLegacySql: false,
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.errors[0].reason).toBe('accessDenied');
    expect(foreign.body.error.message).toContain('service-v1:globex.fact__orders');
  });

  it('is read-only: DML, DDL and scripts are denied, file readers do not exist, the data is unchanged', async () => {
    for (const sql of [
      'DELETE FROM `service-v1.acme.fact__orders` WHERE TRUE',
      'CREATE TABLE `service-v1.acme.x` AS SELECT 1 AS a',
      'SELECT 1; DROP TABLE `service-v1.acme.fact__orders`',
    ]) {
      const r = await t.query(sql);
      expect(r.status, sql).toBe(403);
      expect(r.body.error.errors[0].reason).toBe('accessDenied');
    }
    const file = await t.query("SELECT * FROM read_csv('/etc/passwd')");
    expect(file.status).toBe(400);
    expect(file.body.error.message).toMatch(/^Function not found: read_csv/);
    const introspect = await t.query('SELECT * FROM duckdb_databases()');
    expect(introspect.status).toBe(400);
    const count = await t.query('SELECT COUNT(*) AS n FROM `service-v1.acme.fact__orders`');
    expect(rowsOf(count.body)).toEqual([{ n: '500000' }]);
  });

  it('insists on GoogleSQL: a request without useLegacySql:false is refused', async () => {
    const r = await t.call('POST', `${API}/queries`, { query: 'SELECT 1' });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/useLegacySql: false/);
  });

  it('validates labels and requestId as BigQuery does', async () => {
    const badLabel = await t.query('SELECT 1', { labels: { Brand: 'acme' } });
    expect(badLabel.status).toBe(400);
    expect(badLabel.body.error.errors[0].reason).toBe('invalid');
    const badValue = await t.query('SELECT 1', { labels: { brand: 'Brand_Acme' } });
    expect(badValue.status).toBe(400);
    const longId = await t.query('SELECT 1', { requestId: 'x'.repeat(37) });
    expect(longId.status).toBe(400);
    const ok = await t.query('SELECT 1', { labels: { brand: 'brand_acme', op: 'run-query' }, requestId: crypto.randomUUID() });
    expect(ok.status).toBe(200);
  });

  it('answers jobs in another location as not found', async () => {
    const r = await t.query('SELECT 1 FROM `service-v1.acme.fact__orders` LIMIT 1', { location: 'EU' });
    expect(r.status).toBe(404);
    expect(r.body.error.message).toBe('Not found: Dataset service-v1:acme was not found in location EU');
  });

  it('answers an unknown job with 404 notFound', async () => {
    const r = await t.call('GET', `${API}/queries/job_does_not_exist`);
    expect(r.status).toBe(404);
    expect(r.body.error.errors[0].reason).toBe('notFound');
  });

  it('refuses jobs in a project the account cannot use', async () => {
    const r = await t.call('POST', '/bigquery/v2/projects/other-project/queries', { query: 'SELECT 1', useLegacySql: false });
    expect(r.status).toBe(403);
    expect(r.body.error.errors[0].reason).toBe('accessDenied');
  });
});

describe('jobs', () => {
  it('runs a SELECT again for a repeated requestId: BigQuery documents requestId de-duplication for mutating queries only', async () => {
    const requestId = crypto.randomUUID();
    const sql = 'SELECT COUNT(*) FROM `service-v1.umbrella.fact__orders`';
    const a = await t.query(sql, { requestId, useQueryCache: false });
    const b = await t.query(sql, { requestId, useQueryCache: false });
    expect(a.body.jobReference.jobId).not.toBe(b.body.jobReference.jobId);
    const logged = t.wh.requests.list({ requestId });
    expect(logged).toHaveLength(2);
  });

  it('answers jobComplete:false past timeoutMs, then the results once done; jobs.get reports statistics', async () => {
    const marker = `slow-${crypto.randomUUID()}`;
    t.wh.faults.arm({ kind: 'slowJob', ms: 400, match: { sql: marker } });
    const r = await t.query(`SELECT '${marker}' AS m, COUNT(*) AS n FROM \`service-v1.umbrella.fact__orders\``, { timeoutMs: 50 });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ kind: 'bigquery#queryResponse', jobReference: r.body.jobReference, jobComplete: false });
    const jobId = r.body.jobReference.jobId;
    const running = await t.call('GET', `${API}/jobs/${jobId}?location=US`);
    expect(running.body.status.state).toBe('RUNNING');
    const done = await t.call('GET', `${API}/queries/${jobId}?timeoutMs=5000`);
    expect(done.body.jobComplete).toBe(true);
    expect(rowsOf(done.body)).toEqual([{ m: marker, n: '20000' }]);
    const job = await t.call('GET', `${API}/jobs/${jobId}`);
    expect(job.body.status).toEqual({ state: 'DONE' });
    expect(job.body.statistics.query.statementType).toBe('SELECT');
    expect(job.body.statistics.query.totalBytesBilled).toBe('0');
  });

  it('cancels a running job: it ends with errorResult stopped and its results are an error', async () => {
    const marker = `cancel-${crypto.randomUUID()}`;
    t.wh.faults.arm({ kind: 'slowJob', ms: 2_000, match: { sql: marker } });
    const r = await t.query(`SELECT '${marker}' AS m`, { timeoutMs: 10 });
    const jobId = r.body.jobReference.jobId;
    const c = await t.call('POST', `${API}/jobs/${jobId}/cancel?location=US`);
    expect(c.status).toBe(200);
    expect(c.body.kind).toBe('bigquery#jobCancelResponse');
    // The cancel answers at once; the job ends a little later (docs/local-warehouse.md).
    expect(c.body.job.status.state).toBe('RUNNING');
    const job = await vi.waitFor(
      async () => {
        const got = await t.call('GET', `${API}/jobs/${jobId}`);
        expect(got.body.status.state).toBe('DONE');
        return got;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(job.body.status.errorResult.reason).toBe('stopped');
    const results = await t.call('GET', `${API}/queries/${jobId}?timeoutMs=3000`);
    expect(results.status).toBe(400);
    expect(results.body.error.errors[0].reason).toBe('stopped');
  });

  it('runs a query job from jobs.insert and refuses a duplicate job id', async () => {
    const jobId = `job_test_${crypto.randomUUID().replaceAll('-', '')}`;
    const body = {
      jobReference: { projectId: 'service-v1', jobId, location: 'US' },
      configuration: { query: { query: 'SELECT 7 AS x', useLegacySql: false } },
    };
    const r = await t.call('POST', `${API}/jobs`, body);
    expect(r.status).toBe(200);
    expect(r.body.jobReference.jobId).toBe(jobId);
    const results = await t.call('GET', `${API}/queries/${jobId}`);
    expect(rowsOf(results.body)).toEqual([{ x: '7' }]);
    const again = await t.call('POST', `${API}/jobs`, body);
    expect(again.status).toBe(409);
    expect(again.body.error.errors[0].reason).toBe('duplicate');
  });
});
