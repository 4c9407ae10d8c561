// The demo datasets (docs/demo-data.md): sizes, dates relative to today, the tables and columns
// listed, marts consistent with fact__orders, referential integrity, and determinism.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS, HISTORY_DAYS, SHARDED, TABLES, buildDemoDatabase, shardNames, tableSpec } from '../../dev/warehouse/demo-data.mjs';
import { rowsOf, startTestWarehouse } from './warehouse-helpers.mjs';

let t;
const SIZES = { acme: 500_000, globex: 20_000, umbrella: 20_000 };
const LEGACY = { STRING: 'STRING', DATE: 'DATE', TIMESTAMP: 'TIMESTAMP', INT64: 'INTEGER', FLOAT64: 'FLOAT', BOOL: 'BOOLEAN' };

beforeAll(async () => {
  t = await startTestWarehouse();
});

afterAll(async () => {
  await t?.wh.close();
});

async function rows(sql) {
  const r = await t.query(sql, { maxResults: 10_000 });
  if (r.status !== 200) throw new Error(`${r.status} ${r.body?.error?.message}`);
  return rowsOf(r.body);
}

function addDays(iso, n) {
  const d = new Date(`${iso}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

describe.each(Object.keys(SIZES))('dataset %s', (ds) => {
  const T = (table) => `\`service-v1.${ds}.${table}\``;

  it(`fact__orders has ${SIZES[ds]} orders over the ${HISTORY_DAYS} days ending yesterday, every day covered`, async () => {
    const [r] = await rows(`SELECT COUNT(*) AS n, COUNT(DISTINCT order_id) AS ids, MIN(order_date) AS first, MAX(order_date) AS last,
      COUNT(DISTINCT order_date) AS days, COUNTIF(DATE(order_ts) != order_date) AS ts_mismatch FROM ${T('fact__orders')}`);
    expect(r).toEqual({
      n: String(SIZES[ds]),
      ids: String(SIZES[ds]),
      first: addDays(t.wh.today, -HISTORY_DAYS),
      last: addDays(t.wh.today, -1),
      days: String(HISTORY_DAYS),
      ts_mismatch: '0',
    });
  });

  it('has yesterday and the last full month', async () => {
    const [r] = await rows(`SELECT COUNTIF(order_date = DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY)) AS yesterday,
      COUNT(DISTINCT IF(order_date BETWEEN DATE_TRUNC(DATE_SUB(CURRENT_DATE(), INTERVAL 1 MONTH), MONTH)
        AND LAST_DAY(DATE_SUB(CURRENT_DATE(), INTERVAL 1 MONTH)), order_date, NULL)) AS last_month_days,
      EXTRACT(DAY FROM LAST_DAY(DATE_SUB(CURRENT_DATE(), INTERVAL 1 MONTH))) AS days_in_last_month
      FROM ${T('fact__orders')}`);
    expect(Number(r.yesterday)).toBeGreaterThan(0);
    expect(r.last_month_days).toBe(r.days_in_last_month);
  });

  it('has every table and column of the spec, with those BigQuery types', async () => {
    const meta = await rows(
      `SELECT table_name, column_name, data_type FROM ${T('INFORMATION_SCHEMA.COLUMNS')} ORDER BY table_name, ordinal_position`,
    );
    // The shards of SHARDED (umbrella's events_YYYYMMDD) are tables too: INFORMATION_SCHEMA lists each one.
    const shards = ds === SHARDED.dataset ? shardNames(t.wh.today).map((name) => [name, tableSpec(ds, name, t.wh.today)]) : [];
    const expected = [...Object.entries(TABLES), ...shards]
      .flatMap(([table, def]) => def.columns.map(([column_name, data_type]) => ({ table_name: table, column_name, data_type })))
      .sort((a, b) => a.table_name.localeCompare(b.table_name));
    expect(meta).toEqual(expected);
    for (const [table, def] of Object.entries(TABLES)) {
      const r = await t.query(`SELECT * FROM ${T(table)} LIMIT 1`);
      expect(
        r.body.schema.fields.map((f) => [f.name, f.type]),
        table,
      ).toEqual(def.columns.map(([c, type]) => [c, LEGACY[type]]));
      expect(r.body.rows, table).toHaveLength(1);
    }
  });

  it('table_metadata has one row per table', async () => {
    const r = await rows(`SELECT table_name, layer FROM ${T('table_metadata')} ORDER BY table_name`);
    expect(r).toEqual(
      Object.entries(TABLES)
        .map(([table_name, d]) => ({ table_name, layer: d.layer }))
        .sort((a, b) => a.table_name.localeCompare(b.table_name)),
    );
  });

  it('agg__daily_revenue matches fact__orders per day and channel', async () => {
    const [r] = await rows(`WITH f AS (
        SELECT order_date AS day, channel, COUNT(*) AS orders, SUM(revenue) AS revenue FROM ${T('fact__orders')} GROUP BY 1, 2)
      SELECT COUNT(*) AS pairs, COUNTIF(a.day IS NULL OR f.day IS NULL) AS unmatched,
        COUNTIF(a.orders != f.orders) AS order_diffs, MAX(ABS(a.revenue - f.revenue)) AS max_revenue_diff
      FROM f FULL JOIN ${T('agg__daily_revenue')} a USING (day, channel)`);
    expect(r.unmatched).toBe('0');
    expect(r.order_diffs).toBe('0');
    expect(Number(r.max_revenue_diff)).toBeLessThan(0.006);
    expect(Number(r.pairs)).toBeGreaterThanOrEqual(HISTORY_DAYS * 2);
  });

  it('report__monthly_kpis matches fact__orders per month', async () => {
    const [r] = await rows(`WITH f AS (
        SELECT DATE_TRUNC(order_date, MONTH) AS month, COUNT(*) AS orders, SUM(revenue) AS revenue, COUNT(DISTINCT customer_id) AS customers
        FROM ${T('fact__orders')} GROUP BY 1)
      SELECT COUNT(*) AS months, COUNTIF(k.month IS NULL OR f.month IS NULL) AS unmatched, COUNTIF(k.orders != f.orders) AS order_diffs,
        COUNTIF(k.customers != f.customers) AS customer_diffs, MAX(ABS(k.revenue - f.revenue)) AS max_revenue_diff,
        MAX(ABS(k.aov - ROUND(f.revenue / f.orders, 2))) AS max_aov_diff
      FROM f FULL JOIN ${T('report__monthly_kpis')} k USING (month)`);
    expect(r).toMatchObject({ unmatched: '0', order_diffs: '0', customer_diffs: '0' });
    expect(Number(r.max_revenue_diff)).toBeLessThan(0.006);
    expect(Number(r.max_aov_diff)).toBeLessThan(0.006);
    expect(Number(r.months)).toBeGreaterThanOrEqual(14);
  });

  it('report__monthly_kpis flags exactly the months the data does not cover whole', async () => {
    const [r] = await rows(`WITH span AS (SELECT MIN(order_date) AS first_day, MAX(order_date) AS last_day FROM ${T('fact__orders')})
      SELECT COUNTIF(k.is_partial_month != (k.month < span.first_day OR LAST_DAY(k.month) > span.last_day)) AS wrong,
        COUNTIF(k.is_partial_month) AS partial
      FROM ${T('report__monthly_kpis')} k CROSS JOIN span`);
    expect(r.wrong).toBe('0');
    // 400 days ending yesterday: the first month is partial unless the history began on the 1st, the current one
    // unless yesterday ended its month.
    expect(Number(r.partial)).toBeGreaterThanOrEqual(1);
    expect(Number(r.partial)).toBeLessThanOrEqual(2);
  });

  it('keeps keys and values consistent: customers and products exist, signup precedes the first order', async () => {
    const [r] = await rows(`SELECT
        COUNTIF(c.customer_id IS NULL) AS orphan_customers, COUNTIF(p.product_id IS NULL) AS orphan_products,
        COUNTIF(o.channel NOT IN ('web', 'store', 'marketplace')) AS bad_channels, COUNT(DISTINCT o.currency) AS currencies,
        MIN(o.quantity) AS min_qty, MAX(o.quantity) AS max_qty, COUNTIF(o.revenue <= 0) AS non_positive,
        COUNTIF(c.signup_date > o.order_date) AS signup_after_order
      FROM ${T('fact__orders')} o
      LEFT JOIN ${T('dim__customers')} c USING (customer_id)
      LEFT JOIN ${T('dim__products')} p USING (product_id)`);
    expect(r).toEqual({
      orphan_customers: '0',
      orphan_products: '0',
      bad_channels: '0',
      currencies: '1',
      min_qty: '1',
      max_qty: '5',
      non_positive: '0',
      signup_after_order: '0',
    });
    const [e] = await rows(`SELECT COUNT(*) AS n, COUNTIF(customer_id IS NULL) AS anonymous, COUNT(DISTINCT event_name) AS names
      FROM ${T('raw__web_events')}`);
    expect(Number(e.n)).toBe(DATASETS.find((d) => d.name === ds)?.events);
    expect(Number(e.anonymous)).toBeGreaterThan(0);
    expect(e.names).toBe('5');
  });

  it('signs customers up in step with orders: every full month of the window, signups per order stay in one band', async () => {
    const months =
      await rows(`WITH o AS (SELECT DATE_TRUNC(order_date, MONTH) AS month, COUNT(*) AS orders FROM ${T('fact__orders')} GROUP BY month),
        s AS (SELECT DATE_TRUNC(signup_date, MONTH) AS month, COUNT(*) AS signups FROM ${T('dim__customers')} GROUP BY month)
      SELECT o.month, o.orders, COALESCE(s.signups, 0) AS signups FROM o LEFT JOIN s ON s.month = o.month ORDER BY o.month`);
    // The first and the current month of the window are partial.
    const full = months.slice(1, -1).map((m) => ({ month: m.month, orders: Number(m.orders), signups: Number(m.signups) }));
    expect(full.length).toBeGreaterThanOrEqual(12);
    const ratios = full.map((m) => m.signups / m.orders);
    const mid = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)] ?? 0;
    expect(mid).toBeGreaterThan(0.05);
    const outOfBand = full.filter((_, i) => !((ratios[i] ?? 0) > mid * 0.75 && (ratios[i] ?? 0) < mid * 1.33));
    expect(outOfBand).toEqual([]);
    // Orders grow over the window, and signups with them.
    const first = full[0];
    const last = full[full.length - 1];
    expect(last?.orders).toBeGreaterThan(first?.orders ?? Infinity);
    expect(last?.signups).toBeGreaterThan(first?.signups ?? Infinity);
  });
});

describe('determinism', () => {
  it('builds the same rows for the same today, and different rows for another day', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warehouse-determinism-'));
    const small = [{ ...DATASETS[1], orders: 3_000, customers: 400, events: 500 }];
    try {
      await buildDemoDatabase(join(dir, 'a.duckdb'), '2025-06-15', { datasets: small });
      await buildDemoDatabase(join(dir, 'b.duckdb'), '2025-06-15', { datasets: small });
      await buildDemoDatabase(join(dir, 'c.duckdb'), '2025-06-16', { datasets: small });
      const fingerprint = async (file) => {
        const db = await DuckDBInstance.create(':memory:');
        const conn = await db.connect();
        try {
          await conn.run(`ATTACH '${file}' AS d (READ_ONLY)`);
          const tables = [
            'fact__orders',
            'dim__customers',
            'dim__products',
            'raw__web_events',
            'agg__daily_revenue',
            'report__monthly_kpis',
          ];
          const out = {};
          for (const table of tables) {
            // Order-independent digest of every row's text.
            const r = await conn.runAndReadAll(`SELECT COUNT(*), SUM(hash(CAST(x AS VARCHAR))) FROM d.globex.${table} AS x`);
            out[table] = r.getRowsJS()[0].map(String).join(':');
          }
          return out;
        } finally {
          conn.closeSync();
          db.closeSync();
        }
      };
      const [a, b, c] = [
        await fingerprint(join(dir, 'a.duckdb')),
        await fingerprint(join(dir, 'b.duckdb')),
        await fingerprint(join(dir, 'c.duckdb')),
      ];
      expect(b).toEqual(a);
      expect(c.fact__orders).not.toBe(a.fact__orders);
      expect(a.fact__orders.startsWith('3000:')).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
