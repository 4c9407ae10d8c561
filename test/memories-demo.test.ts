import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEMO_CATALOG, DEMO_CATALOG_FILES, DEMO_MEMORIES } from './demo-catalog';
import { postJson, seedDemo, type TestKey } from './seed';

/**
 * The demo memories say true things: each claim is checked here against the local warehouse, through the API's own
 * query endpoint, so a change to the demo data that makes a memory false fails this file.
 */
const Rows = z.object({ rows: z.array(z.record(z.string(), z.unknown())) });

async function one(key: TestKey, brandId: string, sql: string): Promise<Record<string, unknown>> {
  const res = await postJson('/v1/data/query', key, { sql, brandId });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const row = Rows.parse(res.body).rows[0];
  if (!row) throw new Error(`no row for ${sql}`);
  return row;
}

const t = (ds: string, table: string) => `\`service-v1.${ds}.${table}\``;

beforeAll(async () => {
  await seedDemo();
});

describe('demo memories are true of the demo warehouse', () => {
  it.each([
    ['brand', 'brand_acme', 'acme'],
    ['org', 'brand_globex', 'globex'],
    ['other', 'brand_umbrella', 'umbrella'],
  ] as const)(
    'dim__customers.segment is vip (~5%%), loyalty (~25%%) or standard (~70%%), never anything else (%s)',
    async (key, brand, ds) => {
      const row = await one(
        key,
        brand,
        `SELECT COUNT(*) AS n, COUNTIF(segment = 'vip') AS vip, COUNTIF(segment = 'loyalty') AS loyalty,
         COUNTIF(segment = 'standard') AS standard
       FROM ${t(ds, 'dim__customers')}`,
      );
      const [n, vip, loyalty, standard] = [row.n, row.vip, row.loyalty, row.standard].map(Number) as [number, number, number, number];
      expect(vip + loyalty + standard).toBe(n);
      expect(Math.abs(vip / n - 0.05)).toBeLessThan(0.02);
      expect(Math.abs(loyalty / n - 0.25)).toBeLessThan(0.03);
      expect(Math.abs(standard / n - 0.7)).toBeLessThan(0.03);
    },
  );

  it('covers system, org and table-linked brand memories for brand_acme and brand_umbrella', () => {
    const kinds = new Set(
      DEMO_MEMORIES.map((m) => (m.scope === 'brand' ? `${m.brandId}:${m.table === null ? 'general' : 'table'}` : m.scope)),
    );
    for (const k of ['system', 'org', 'brand_acme:table', 'brand_umbrella:table']) expect(kinds).toContain(k);
  });

  it.each([
    ['org', 'brand_globex', 'globex'],
    ['other', 'brand_umbrella', 'umbrella'],
  ] as const)('fact__orders.revenue is quantity x list price less a 10%% or 20%% discount, nothing else (%s)', async (key, brand, ds) => {
    const row = await one(
      key,
      brand,
      `SELECT
         COUNTIF(ABS(o.revenue - ROUND(o.quantity * p.unit_price, 2)) > 0.011
             AND ABS(o.revenue - ROUND(o.quantity * p.unit_price * 0.9, 2)) > 0.011
             AND ABS(o.revenue - ROUND(o.quantity * p.unit_price * 0.8, 2)) > 0.011) AS other,
         COUNTIF(o.revenue < ROUND(o.quantity * p.unit_price, 2) - 0.011) AS discounted
       FROM ${t(ds, 'fact__orders')} AS o JOIN ${t(ds, 'dim__products')} AS p ON p.product_id = o.product_id`,
    );
    expect(row.other).toBe(0);
    expect(Number(row.discounted)).toBeGreaterThan(0);
  });

  it('agg__daily_revenue is fact__orders by order_date and channel; report__monthly_kpis by order_date month', async () => {
    const daily = await one(
      'org',
      'brand_globex',
      `WITH f AS (SELECT order_date AS day, channel, COUNT(*) AS orders, ROUND(SUM(revenue), 2) AS revenue
                   FROM ${t('globex', 'fact__orders')} GROUP BY order_date, channel)
       SELECT COUNT(*) AS rows_total, COUNTIF(f.day IS NULL OR a.day IS NULL OR f.orders <> a.orders OR ABS(f.revenue - a.revenue) > 0.011) AS mismatched
       FROM f FULL OUTER JOIN ${t('globex', 'agg__daily_revenue')} AS a ON a.day = f.day AND a.channel = f.channel`,
    );
    expect(Number(daily.rows_total)).toBeGreaterThan(300);
    expect(daily.mismatched).toBe(0);
    const monthly = await one(
      'org',
      'brand_globex',
      `WITH f AS (SELECT DATE_TRUNC(order_date, MONTH) AS month, COUNT(*) AS orders, ROUND(SUM(revenue), 2) AS revenue,
                         COUNT(DISTINCT customer_id) AS customers
                    FROM ${t('globex', 'fact__orders')} GROUP BY 1)
       SELECT COUNT(*) AS months,
              COUNTIF(f.month IS NULL OR k.month IS NULL OR f.orders <> k.orders OR ABS(f.revenue - k.revenue) > 0.011 OR f.customers <> k.customers) AS mismatched,
              (SELECT SUM(customers) FROM ${t('globex', 'report__monthly_kpis')}) AS summed_customers,
              (SELECT COUNT(DISTINCT customer_id) FROM ${t('globex', 'fact__orders')}) AS distinct_customers
       FROM f FULL OUTER JOIN ${t('globex', 'report__monthly_kpis')} AS k ON k.month = f.month`,
    );
    expect(monthly.mismatched).toBe(0);
    // "customers do not add up": summing the months counts repeat buyers again.
    expect(Number(monthly.summed_customers)).toBeGreaterThan(Number(monthly.distinct_customers));
  });

  it('Acme orders are 500,000 in USD over 400 days; Umbrella revenue is GBP and anonymous visits have no customer_id', async () => {
    const acme = await one(
      'org',
      'brand_acme',
      `SELECT COUNT(*) AS orders, COUNT(DISTINCT currency) AS currencies, MIN(currency) AS currency,
              DATE_DIFF(MAX(order_date), MIN(order_date), DAY) AS span_days FROM ${t('acme', 'fact__orders')}`,
    );
    expect(acme).toMatchObject({ orders: 500000, currencies: 1, currency: 'USD' });
    expect(Number(acme.span_days)).toBeLessThanOrEqual(400);
    const umbrella = await one(
      'other',
      'brand_umbrella',
      `SELECT (SELECT COUNT(DISTINCT currency) FROM ${t('umbrella', 'fact__orders')}) AS currencies,
              (SELECT MIN(currency) FROM ${t('umbrella', 'fact__orders')}) AS currency,
              (SELECT COUNT(*) FROM ${t('umbrella', 'fact__orders')}) AS orders,
              (SELECT COUNTIF(customer_id IS NULL) FROM ${t('umbrella', 'raw__web_events')}) AS anonymous`,
    );
    expect(umbrella).toMatchObject({ currencies: 1, currency: 'GBP', orders: 20000 });
    expect(Number(umbrella.anonymous)).toBeGreaterThan(0);
  });
});

describe('demo text says what a period is', () => {
  it('every demo text naming WEEKLY says the rolling 7 days to yesterday; the Monday review asks for LAST_FULL_WEEK', () => {
    const texts = DEMO_CATALOG_FILES.map((f) => f.text).filter((text) => /\bWEEKLY\b/.test(text));
    expect(texts.length).toBeGreaterThan(0);
    for (const text of texts) expect(text).toContain('the rolling 7 days to yesterday');
    const trading = DEMO_CATALOG.reports.find((r) => r.id === 'rpt_acme_trading');
    expect(trading?.instructions).toContain('`period.cadence` LAST_FULL_WEEK');
  });
});
