// The BigQuery -> DuckDB rewrite: quoting and literals (never touched inside strings or comments), and the
// functions that differ, checked by running them on the local warehouse against answers worked out by hand
// from BigQuery's documented semantics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DialectError, classify, toDuckDb } from '../../dev/warehouse/dialect.mjs';
import { startTestWarehouse } from './warehouse-helpers.mjs';

const CTX = { project: 'service-v1', datasets: ['acme', 'globex', 'umbrella'], today: '2024-03-14' };

/** One local warehouse for the file's semantic tests (started once: building its demo data is the slow part). */
let t;
beforeAll(async () => {
  t = await startTestWarehouse();
}, 120_000);
afterAll(async () => {
  await t?.wh.close();
});
const rewrite = (sql) => toDuckDb(sql, CTX).sql;

describe('quoting and literals', () => {
  it.each([
    ['SELECT 1 FROM `service-v1.acme.fact__orders`'],
    ['SELECT 1 FROM `service-v1`.acme.fact__orders'],
    ['SELECT 1 FROM `service-v1`.`acme`.`fact__orders`'],
    ['SELECT 1 FROM service-v1.acme.fact__orders'],
    ['SELECT 1 FROM acme.fact__orders'],
  ])('%s names "service-v1"."acme"."fact__orders"', (sql) => {
    expect(rewrite(sql)).toBe('SELECT 1 FROM "service-v1"."acme"."fact__orders"');
  });

  it('maps INFORMATION_SCHEMA views in every spelling', () => {
    for (const sql of [
      'SELECT * FROM `service-v1.acme.INFORMATION_SCHEMA.COLUMNS`',
      'SELECT * FROM `service-v1`.acme.INFORMATION_SCHEMA.COLUMNS',
      'SELECT * FROM acme.INFORMATION_SCHEMA.columns',
    ]) {
      expect(rewrite(sql)).toBe('SELECT * FROM "service-v1"."acme"."INFORMATION_SCHEMA.COLUMNS"');
    }
  });

  it('leaves string literals exactly as written and drops comments, whatever they contain', () => {
    const sql = [
      "SELECT 'DATE_TRUNC(d, MONTH) `service-v1.acme.t` -- not a comment /* nor this */' AS s,",
      '  "SAFE_DIVIDE(a, b) #x" AS d -- DATE_SUB(`service-v1.acme.t`, INTERVAL 1 DAY) \'',
      '/* COUNTIF(x) `service-v1.globex.t` "q" */ FROM `service-v1.acme.fact__orders`',
    ].join('\n');
    const out = rewrite(sql);
    expect(out).toContain("'DATE_TRUNC(d, MONTH) `service-v1.acme.t` -- not a comment /* nor this */'");
    expect(out).toContain("'SAFE_DIVIDE(a, b) #x'");
    // Comments never reach DuckDB (it would end them by its own rules); their line breaks stay.
    expect(out).not.toContain('DATE_SUB');
    expect(out).not.toContain('COUNTIF');
    expect(out.split('\n')).toHaveLength(3);
    expect(out).toContain('FROM "service-v1"."acme"."fact__orders"');
  });

  it('drops # and -- comments up to CR or LF, as the SQL guard reads them', () => {
    expect(rewrite('#standardSQL\nSELECT 1 # trailing `x`')).toBe(' \nSELECT 1  ');
    expect(rewrite('SELECT 1 -- a\r, 2 # b\r\n, 3')).toBe('SELECT 1  \r, 2  \r\n, 3');
  });

  it.each([
    ["SELECT 'it\\'s'", "SELECT 'it''s'"],
    ['SELECT "double \\"quoted\\""', `SELECT 'double "quoted"'`],
    ["SELECT r'\\d+\\.'", "SELECT '\\d+\\.'"],
    ["SELECT '''a 'quoted' word'''", "SELECT 'a ''quoted'' word'"],
    ["SELECT '\\x41\\u00e9\\101'", "SELECT 'AéA'"],
    ["SELECT b'\\x00\\xffA'", "SELECT unhex('00ff41')"],
    ['SELECT 1.5, 2, 1e3, .5', 'SELECT CAST(1.5 AS DOUBLE), 2, CAST(1e3 AS DOUBLE), CAST(.5 AS DOUBLE)'],
  ])('%s -> %s', (sql, expected) => {
    expect(rewrite(sql)).toBe(expected);
  });

  it('reports where an unclosed literal starts', () => {
    expect(() => rewrite("SELECT 1,\n  'oops")).toThrow(DialectError);
    try {
      rewrite("SELECT 1,\n  'oops");
    } catch (e) {
      expect(e.message).toBe('Syntax error: Unclosed string literal');
      expect(e.offset).toBe(12);
    }
  });

  it('maps output offsets back to the source token', () => {
    const r = toDuckDb('SELECT SAFE_DIVIDE(a, b) FROM `service-v1.acme.fact__orders`', CTX);
    expect(r.sourceOffset(r.sql.indexOf('"service-v1"'))).toBe('SELECT SAFE_DIVIDE(a, b) FROM '.length);
  });
});

describe('statement classification', () => {
  it.each([
    ['SELECT 1', 'SELECT', 1],
    ['  -- lead comment\n WITH a AS (SELECT 1) SELECT * FROM a', 'SELECT', 1],
    ['SELECT 1;', 'SELECT', 1],
    ['SELECT 1; SELECT 2', 'SCRIPT', 2],
    ['UPDATE t SET a = 1 WHERE TRUE', 'UPDATE', 1],
    ['MERGE t USING s ON FALSE WHEN NOT MATCHED THEN INSERT ROW', 'MERGE', 1],
    ['CREATE OR REPLACE VIEW v AS SELECT 1', 'CREATE_VIEW', 1],
    ['DECLARE x INT64', 'SCRIPT', 1],
    ['EXPORT DATA OPTIONS() AS SELECT 1', 'EXPORT_DATA', 1],
  ])('%s is %s', (sql, type, count) => {
    expect(classify(sql)).toEqual({ statementType: type, statementCount: count });
  });
});

describe('function and syntax rewrites', () => {
  it.each([
    ['SELECT DATE_TRUNC(d, MONTH)', "CAST(date_trunc('month', d) AS DATE)"],
    ['SELECT SAFE_DIVIDE(a, b)', 'bq_safe_divide(a, b)'],
    ['SELECT COUNTIF(x > 1)', 'count_if(x > 1)'],
    ['SELECT * EXCEPT (a, b) FROM t', 'SELECT * EXCLUDE (a, b) FROM t'],
    ['SELECT a FROM t UNION DISTINCT SELECT a FROM u', 'SELECT a FROM t UNION SELECT a FROM u'],
    ['SELECT x IN UNNEST(arr)', 'x IN (SELECT unnest(arr))'],
    ['SELECT SAFE_CAST(x AS INT64)', 'TRY_CAST(x AS BIGINT)'],
    ['SELECT CAST(x AS ARRAY<STRUCT<a STRING, b FLOAT64>>)', 'CAST(x AS STRUCT("a" VARCHAR, "b" DOUBLE)[])'],
    ['SELECT CURRENT_DATE()', "DATE '2024-03-14'"],
    ['SELECT CURRENT_DATE', "DATE '2024-03-14'"],
    ["SELECT TIMESTAMP '2024-01-01 00:00:00'", "TIMESTAMPTZ '2024-01-01 00:00:00'"],
    ["SELECT DATETIME '2024-01-01 00:00:00'", "TIMESTAMP '2024-01-01 00:00:00'"],
    ['SELECT a FROM t, UNNEST(t.arr) AS x', 'UNNEST(t.arr) AS _unnest_1("x")'],
    ['SELECT a FROM t, t.arr AS x', 'UNNEST(t.arr) AS _unnest_1("x")'],
    ['SELECT arr[OFFSET(0)], arr[ORDINAL(1)], arr[2]', 'arr[(0) + 1], arr[1], arr[(2) + 1]'],
    ['SELECT DATE_ADD(d, INTERVAL n DAY)', 'CAST(((d) + INTERVAL (n) DAY) AS DATE)'],
  ])('%s', (sql, expected) => {
    expect(rewrite(sql)).toContain(expected);
  });
});

describe('semantics on the local warehouse', () => {
  const value = async (expr) => {
    const r = await t.query(`SELECT ${expr} AS v`);
    if (r.status !== 200) throw new Error(`${expr}: ${r.status} ${r.body?.error?.message}`);
    return r.body.rows[0].f[0].v;
  };

  it.each([
    // Weeks start on Sunday in BigQuery unless WEEK(<day>) says otherwise; 2024-03-14 is a Thursday.
    ["DATE_TRUNC(DATE '2024-03-14', WEEK)", '2024-03-10'],
    ["DATE_TRUNC(DATE '2024-03-14', WEEK(MONDAY))", '2024-03-11'],
    ["DATE_TRUNC(DATE '2024-03-14', ISOWEEK)", '2024-03-11'],
    ["DATE_TRUNC(DATE '2024-03-14', MONTH)", '2024-03-01'],
    ["DATE_TRUNC(DATE '2024-03-14', QUARTER)", '2024-01-01'],
    ["DATE_TRUNC(DATE '2021-01-02', ISOYEAR)", '2019-12-30'],
    ["EXTRACT(DAYOFWEEK FROM DATE '2024-03-14')", '5'],
    ["EXTRACT(WEEK FROM DATE '2024-03-14')", '10'],
    ["EXTRACT(ISOWEEK FROM DATE '2024-03-14')", '11'],
    ["EXTRACT(DAYOFYEAR FROM DATE '2024-03-14')", '74'],
    ["EXTRACT(MILLISECOND FROM TIMESTAMP '2024-01-01 00:00:07.250+00')", '250'],
    ["DATE_DIFF(DATE '2024-03-14', DATE '2024-03-09', WEEK)", '1'],
    ["DATE_DIFF(DATE '2024-03-14', DATE '2024-03-09', DAY)", '5'],
    ["DATE_DIFF(DATE '2024-03-01', DATE '2024-02-29', MONTH)", '1'],
    ["TIMESTAMP_DIFF(TIMESTAMP '2024-01-01 01:00:00+00', TIMESTAMP '2024-01-01 00:59:00+00', HOUR)", '0'],
    ["TIMESTAMP_DIFF(TIMESTAMP '2024-01-01 02:00:00+00', TIMESTAMP '2024-01-01 00:30:00+00', MINUTE)", '90'],
    ["DATE_ADD(DATE '2024-01-31', INTERVAL 1 MONTH)", '2024-02-29'],
    ["DATE_SUB(DATE '2024-03-01', INTERVAL 1 DAY)", '2024-02-29'],
    ["DATE_ADD(DATE '2024-01-01', INTERVAL 2 QUARTER)", '2024-07-01'],
    ["LAST_DAY(DATE '2024-02-10')", '2024-02-29'],
    ["FORMAT_DATE('%F|%Y%m%d|%b %e|%A', DATE '2024-03-04')", '2024-03-04|20240304|Mar 4|Monday'],
    ["FORMAT_DATE('%Y-Q%Q', DATE '2024-05-04')", '2024-Q2'],
    ["PARSE_DATE('%d/%m/%Y', '29/02/2024')", '2024-02-29'],
    ["UNIX_SECONDS(TIMESTAMP '2024-01-01 00:00:00+00')", '1704067200'],
    ['TIMESTAMP_SECONDS(1704067200)', '1.7040672E9'],
    ["STRING(TIMESTAMP '2024-01-01 10:00:00+00')", '2024-01-01 10:00:00+00'],
    ["DATE(TIMESTAMP '2024-01-01 03:00:00+00', 'America/New_York')", '2023-12-31'],
    ["FORMAT_TIMESTAMP('%H:%M', TIMESTAMP '2024-01-01 12:00:00+00', 'Europe/Berlin')", '13:00'],
    ["TIMESTAMP_TRUNC(TIMESTAMP '2024-01-01 03:00:00+00', DAY, 'America/New_York')", '1.7039988E9'],
    ['SAFE_DIVIDE(1, 0)', null],
    ['SAFE_DIVIDE(1, 4)', '0.25'],
    ['IEEE_DIVIDE(1, 4)', '0.25'],
    ["IFNULL(NULL, 'a')", 'a'],
    ["CONCAT('a', NULL)", null],
    ["CONCAT('a', 'b', 'c')", 'abc'],
    ['[10, 20, 30][OFFSET(1)]', '20'],
    ['[10, 20, 30][ORDINAL(1)]', '10'],
    ['[10, 20, 30][SAFE_OFFSET(5)]', null],
    ['[10, 20, 30][1]', '20'],
    ['2 IN UNNEST([1, 2])', 'true'],
    ["SPLIT('a,b,c')[OFFSET(2)]", 'c'],
    ["REGEXP_EXTRACT('order-123', r'(\\d+)')", '123'],
    ["REGEXP_EXTRACT('abc', r'\\d+')", null],
    ["REGEXP_REPLACE('a1b22', r'\\d', '#')", 'a#b##'],
    ["REGEXP_CONTAINS('abc', r'^a')", 'true'],
    ['LOG(8, 2)', '3.0'],
    ['DIV(7, 2)', '3'],
    ['MOD(7, 2)', '1'],
    ['ARRAY_LENGTH([1, 2, 3])', '3'],
    ["ARRAY_TO_STRING(['a', 'b'], '-')", 'a-b'],
    ["INITCAP('hello world')", 'Hello World'],
    ['RANGE_BUCKET(20, [0, 10, 20, 30])', '3'],
    ["LPAD('7', 3, '0')", '007'],
    ["FORMAT('%05d|%s', 42, 'x')", '00042|x'],
    ['STRUCT(1 AS a, 2 AS b).b', '2'],
    ["SAFE.PARSE_DATE('%Y-%m-%d', '2023-02-29')", null],
    ["SAFE_CAST('12' AS INT64) + 1", '13'],
    ["'a\\tb'", 'a\tb'],
    ['(SELECT COUNTIF(x > 1) FROM UNNEST([1, 2, 3]) AS x)', '2'],
    ['(SELECT LOGICAL_AND(x > 0) FROM UNNEST([1, 2, 3]) AS x)', 'true'],
    ["(SELECT STRING_AGG(x, '|' ORDER BY x) FROM UNNEST(['b', 'c', 'a']) AS x)", 'a|b|c'],
  ])('%s = %j', async (expr, expected) => {
    expect(await value(expr)).toBe(expected);
  });

  it("evaluates CURRENT_DATE() to the demo data's today", async () => {
    expect(await value('CURRENT_DATE()')).toBe(t.wh.today);
    const ts = Number(await value('UNIX_SECONDS(CURRENT_TIMESTAMP())'));
    expect(new Date(ts * 1000).toISOString().slice(0, 10)).toBe(t.wh.today);
  });

  it.each([
    ['(SELECT ARRAY_AGG(x IGNORE NULLS ORDER BY x DESC LIMIT 2) FROM UNNEST([3, NULL, 1, 2]) AS x)', [{ v: '3' }, { v: '2' }]],
    ['APPROX_QUANTILES(x, 4)', null],
    [
      "GENERATE_DATE_ARRAY(DATE '2024-02-27', DATE '2024-03-01')",
      [{ v: '2024-02-27' }, { v: '2024-02-28' }, { v: '2024-02-29' }, { v: '2024-03-01' }],
    ],
    ["ARRAY(SELECT AS STRUCT 1 AS a, 'x' AS b)", [{ v: { f: [{ v: '1' }, { v: 'x' }] } }]],
    ['GENERATE_ARRAY(1, 7, 3)', [{ v: '1' }, { v: '4' }, { v: '7' }]],
  ])('%s', async (expr, expected) => {
    if (expected === null) {
      const r = await t.query(`SELECT ${expr} AS v FROM UNNEST([1, 2, 3, 4, 5]) AS x`);
      expect(r.body.rows[0].f[0].v).toEqual(['1', '2', '3', '4', '5'].map((v) => ({ v })));
      return;
    }
    expect(await value(expr)).toEqual(expected);
  });

  it('runs set operations with DISTINCT and WITH OFFSET as BigQuery does', async () => {
    const r = await t.query('SELECT x FROM UNNEST([1, 2, 2, 3]) AS x EXCEPT DISTINCT SELECT 2 ORDER BY x');
    expect(r.body.rows.map((row) => row.f[0].v)).toEqual(['1', '3']);
    const o = await t.query("SELECT v, i FROM UNNEST(['a', 'b', 'c']) AS v WITH OFFSET AS i ORDER BY i");
    expect(o.body.rows.map((row) => row.f.map((c) => c.v))).toEqual([
      ['a', '0'],
      ['b', '1'],
      ['c', '2'],
    ]);
  });

  it('expands a star in SELECT AS STRUCT to every field, in order, as BigQuery does; refuses what it cannot restate', async () => {
    const src = "(SELECT 1 AS a, 'x' AS b) AS t";
    const fields = (r) => r.body.schema.fields[0].fields.map((f) => `${f.name} ${f.type}`);
    const scalar = await t.query(`SELECT (SELECT AS STRUCT t.*) AS s FROM ${src}`);
    expect(scalar.status, JSON.stringify(scalar.body)).toBe(200);
    expect(scalar.body.rows[0].f[0].v).toEqual({ f: [{ v: '1' }, { v: 'x' }] });
    expect(fields(scalar)).toEqual(['a INTEGER', 'b STRING']);
    // Named fields before, between and after the star keep their places.
    const mixed = await t.query(`SELECT ARRAY(SELECT AS STRUCT 0 AS z, t.*, 3 AS c, 2 * 2 AS d FROM ${src}) AS s`);
    expect(mixed.status, JSON.stringify(mixed.body)).toBe(200);
    expect(mixed.body.rows[0].f[0].v).toEqual([{ v: { f: [{ v: '0' }, { v: '1' }, { v: 'x' }, { v: '3' }, { v: '4' }] } }]);
    expect(fields(mixed)).toEqual(['z INTEGER', 'a INTEGER', 'b STRING', 'c INTEGER', 'd INTEGER']);
    // A table's rows through their alias, as assistants write it.
    const rows = await t.query(
      'SELECT (SELECT AS STRUCT o.*).order_id AS a, o.order_id AS b FROM `service-v1.acme.fact__orders` AS o ORDER BY b LIMIT 1',
    );
    expect(rows.status, JSON.stringify(rows.body)).toBe(200);
    const [a, b] = rows.body.rows[0].f.map((c) => c.v);
    expect(a).toBe(b);
    expect(a).not.toBeNull();
    // Not restated locally: said so by name, never run as something else.
    const bare = await t.query("SELECT ARRAY(SELECT AS STRUCT * FROM (SELECT 1 AS a, 'x' AS b)) AS s");
    expect(bare.body.error?.message).toMatch(/SELECT AS STRUCT \* only with a table alias/);
    const except = await t.query(`SELECT ARRAY(SELECT AS STRUCT t.* EXCEPT (a) FROM ${src}) AS s`);
    expect(except.body.error?.message).toMatch(/star and EXCEPT or REPLACE/);
  });

  it('runs PIVOT and names the columns after the values', async () => {
    const r = await t.query(`SELECT * FROM (SELECT 'web' AS ch, 2 AS n UNION ALL SELECT 'store', 3 UNION ALL SELECT 'web', 5)
      PIVOT (SUM(n) FOR ch IN ('web', 'store'))`);
    expect(r.body.schema.fields.map((f) => f.name)).toEqual(['web', 'store']);
    expect(r.body.rows[0].f.map((c) => c.v)).toEqual(['7', '3']);
  });

  it('runs QUALIFY', async () => {
    const r = await t.query('SELECT x FROM UNNEST([5, 1, 4]) AS x QUALIFY ROW_NUMBER() OVER (ORDER BY x DESC) = 1');
    expect(r.body.rows).toEqual([{ f: [{ v: '5' }] }]);
  });
});

// The GoogleSQL the SQL guard admits (issue 35) runs here too, so `npm run dev` is a faithful place to try SQL; what
// DuckDB cannot express is refused naming the construct, never with DuckDB's own message (docs/local-warehouse.md).
describe('GoogleSQL the guard admits runs on the local warehouse', () => {
  const T = "WITH t AS (SELECT 'web' AS ch, 2 AS n UNION ALL SELECT 'store', 3 UNION ALL SELECT 'web', 5)\n";
  const table = async (sql) => {
    const r = await t.query(sql);
    if (r.status !== 200) throw new Error(`${sql}: ${r.status} ${r.body?.error?.message}`);
    return { names: r.body.schema.fields.map((f) => f.name), rows: (r.body.rows ?? []).map((row) => row.f.map((c) => c.v)) };
  };
  const value = async (expr) => (await table(`SELECT ${expr} AS v`)).rows[0]?.[0];

  it.each([
    [
      'WHERE, AGGREGATE ... GROUP BY, ORDER BY',
      `${T}FROM t |> WHERE n > 1 |> AGGREGATE SUM(n) AS total, COUNT(*) AS c GROUP BY ch |> ORDER BY total DESC`,
      ['ch', 'total', 'c'],
      [
        ['web', '7', '2'],
        ['store', '3', '1'],
      ],
    ],
    [
      'EXTEND, SET, DROP, RENAME, ORDER BY, LIMIT',
      `${T}FROM t |> EXTEND n * 10 AS m |> SET n = n + 1 |> DROP ch |> RENAME m AS big |> ORDER BY big |> LIMIT 2`,
      ['n', 'big'],
      [
        ['3', '20'],
        ['4', '30'],
      ],
    ],
    [
      'a JOIN after a WHERE, the input alias still in scope',
      `${T}, u AS (SELECT 'web' AS ch, 'online' AS label)\nFROM t AS a |> WHERE a.n > 2 |> JOIN u AS b ON b.ch = a.ch |> SELECT a.n, b.label`,
      ['n', 'label'],
      [['5', 'online']],
    ],
    [
      'AS, a WHERE over a SELECT, UNION ALL, then LIMIT',
      `${T}FROM t |> AS x |> SELECT x.n |> WHERE n < 5 |> UNION ALL (SELECT 10) |> ORDER BY n DESC |> LIMIT 2`,
      ['n'],
      [['10'], ['3']],
    ],
    ['pipe steps after a SELECT query', `${T}SELECT ch, SUM(n) AS s FROM t GROUP BY ch |> WHERE s > 5`, ['ch', 's'], [['web', '7']]],
    ['a pipe query in a subquery', `${T}SELECT (FROM t |> AGGREGATE MAX(n) AS m) AS v`, ['v'], [['5']]],
    ['AGGREGATE without GROUP BY', `${T}FROM t |> AGGREGATE COUNT(*) AS c, SUM(n) AS s`, ['c', 's'], [['3', '10']]],
  ])('pipe syntax: %s', async (_name, sql, names, rows) => {
    expect(await table(sql)).toEqual({ names, rows });
  });

  it.each([
    ["'web' LIKE ANY ('w%', 's%')", 'true'],
    ["'web' LIKE SOME ('x%', 'we_')", 'true'],
    ["'web' LIKE ALL ('w%', '%b')", 'true'],
    ["'web' LIKE ALL ('w%', 's%')", 'false'],
    ["'web' NOT LIKE ANY ('w%', 's%')", 'true'],
    ["LOWER('WEB') LIKE ANY ('x%', 'w%') AND TRUE", 'true'],
    ["COLLATE('Web', 'und:ci') = 'WEB'", 'true'],
    ["COLLATE('Web', '') = 'WEB'", 'false'],
    ["(SELECT HLL_COUNT.EXTRACT(HLL_COUNT.INIT(x)) FROM UNNEST(['a', 'b', 'a', NULL]) AS x)", '2'],
    ['(SELECT HLL_COUNT.MERGE(s) FROM (SELECT HLL_COUNT.INIT(x) AS s FROM UNNEST([1, 2, 3, 2]) AS x GROUP BY MOD(x, 2)))', '3'],
    ['(SELECT KLL_QUANTILES.EXTRACT_POINT_INT64(KLL_QUANTILES.INIT_INT64(x), 0.5) FROM UNNEST([1, 2, 3, 4, 5]) AS x)', '3'],
    // Google's examples: https://cloud.google.com/bigquery/docs/reference/standard-sql/net_functions#nethost
    ["NET.HOST('//user:password@a.b:80/path?query')", 'a.b'],
    ["NET.HOST('https://[::1]:80')", '[::1]'],
    ["NET.HOST('    www.Example.Co.UK    ')", 'www.Example.Co.UK'],
    ["DATE_BUCKET(DATE '2024-03-14', INTERVAL 7 DAY)", '2024-03-10'],
    ["DATE_BUCKET(DATE '2024-03-14', INTERVAL 7 DAY, DATE '2024-03-13')", '2024-03-13'],
    ["DATE_BUCKET(DATE '2024-03-14', INTERVAL 1 MONTH)", '2024-03-01'],
  ])('%s = %j', async (expr, expected) => {
    expect(await value(expr)).toBe(expected);
  });

  it('returns arrays from KLL_QUANTILES, APPROX_TOP_SUM and JSON_QUERY_ARRAY', async () => {
    expect(await value('(SELECT KLL_QUANTILES.EXTRACT_INT64(KLL_QUANTILES.INIT_INT64(x), 2) FROM UNNEST([1, 2, 3, 4, 5]) AS x)')).toEqual(
      ['1', '3', '5'].map((v) => ({ v })),
    );
    const top = await table(
      "WITH w AS (SELECT 'a' AS x, 1 AS w UNION ALL SELECT 'b', 5 UNION ALL SELECT 'a', 2 UNION ALL SELECT 'c', 1)\nSELECT APPROX_TOP_SUM(x, w, 2) AS top FROM w",
    );
    expect(top.rows[0]?.[0]).toEqual([{ v: { f: [{ v: 'b' }, { v: '5' }] } }, { v: { f: [{ v: 'a' }, { v: '3' }] } }]);
    expect(await value(`JSON_QUERY_ARRAY('{"a": [1, {"b": 2}]}', '$.a')`)).toEqual([{ v: '1' }, { v: '{"b":2}' }]);
    expect(await value(`JSON_VALUE_ARRAY('["x", "y"]')`)).toEqual([{ v: 'x' }, { v: 'y' }]);
  });

  it('orders by a case-insensitive collation', async () => {
    const r = await table("SELECT x FROM UNNEST(['b', 'a', 'C']) AS x ORDER BY x COLLATE 'und:ci'");
    expect(r.rows.map(([x]) => x)).toEqual(['a', 'b', 'C']);
  });

  it('reads time travel within the window as the table now (nothing changes after creation), and refuses any other instant', async () => {
    const P = '`service-v1.acme.dim__products`';
    const [[now]] = (await table(`SELECT COUNT(*) FROM ${P}`)).rows;
    // The tables are created at today 00:00 UTC: that instant and now are both in BigQuery's window, at any time of day.
    expect((await table(`SELECT COUNT(*) FROM ${P} FOR SYSTEM_TIME AS OF CURRENT_TIMESTAMP()`)).rows).toEqual([[now]]);
    const created = 'TIMESTAMP(CURRENT_DATE())';
    expect((await table(`SELECT COUNT(*) FROM ${P} AS p FOR SYSTEM_TIME AS OF ${created} WHERE p.product_id IS NOT NULL`)).rows).toEqual([
      [now],
    ]);
    const joined = await table(`SELECT COUNT(*) FROM ${P} p FOR SYSTEM_TIME AS OF ${created} JOIN ${P} AS q USING (product_id)`);
    expect(joined.rows).toEqual([[now]]);
    for (const instant of ['TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 8 DAY)', 'TIMESTAMP_ADD(CURRENT_TIMESTAMP(), INTERVAL 1 DAY)']) {
      const r = await t.query(`SELECT COUNT(*) FROM ${P} AS p FOR SYSTEM_TIME AS OF ${instant}`);
      expect(r.status).toBe(400);
      expect(r.body.error.message).toContain('Invalid snapshot time');
    }
    const dry = await t.dryRun(`SELECT * FROM ${P} FOR SYSTEM_TIME AS OF CURRENT_TIMESTAMP()`);
    expect(dry.body.statistics.query.referencedTables).toEqual([{ projectId: 'service-v1', datasetId: 'acme', tableId: 'dim__products' }]);
  });

  it.each([
    ['FROM `service-v1.acme.dim__products` |> WINDOW w AS (ORDER BY product_id)', 'pipe operator |> WINDOW'],
    ["SELECT 'a' LIKE ANY UNNEST(['a'])", 'LIKE ANY UNNEST(...)'],
    ["SELECT NET.REG_DOMAIN('https://a.b.co.uk')", 'NET.REG_DOMAIN'],
    ["SELECT COLLATE('a', 'de:ci')", "COLLATE 'de:ci'"],
    ["SELECT DATE_BUCKET(DATE '2024-03-14', INTERVAL 1 MONTH, DATE '2024-01-15')", 'DATE_BUCKET with a month-based width and an origin'],
  ])('%s is refused naming %s', async (sql, construct) => {
    const r = await t.query(sql);
    expect(r.status).toBe(400);
    expect(r.body.error.errors[0].reason).toBe('invalidQuery');
    expect(r.body.error.message).toMatch(
      new RegExp(`^${construct.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} runs on BigQuery, not in the local warehouse at \\[1:\\d+\\]$`),
    );
  });
});
