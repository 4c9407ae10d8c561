// Deterministic demo datasets of docs/demo-data.md, generated with set-based SQL in DuckDB.
// Every value comes from a stateless integer hash of (row number, salt), so the same `today` always gives
// the same rows, independent of thread scheduling; dates are relative to `today` so "yesterday" and
// "last full month" always have data. The result is written once to a DuckDB file (cached per day and
// generator version) which the server attaches READ_ONLY: no query can change the demo data.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, version as duckdbVersion } from '@duckdb/node-api';

export const PROJECT = 'service-v1';
/**
 * The project `npm run dev` and the tests host the demo datasets under: a real-looking id that differs from the
 * contract's `service-v1`, as every real deployment's does, so every run proves the service maps one to the other.
 */
export const DEV_PROJECT = 'demo-analytics-dev';
/** Schemas of the data file that are bookkeeping, not datasets. */
export const META_SCHEMA = '__warehouse';

/** Columns of every table in every dataset, with BigQuery type names (docs/demo-data.md, "Warehouse datasets"). */
export const TABLES = {
  table_metadata: {
    layer: 'meta',
    dataSource: 'warehouse',
    description: 'Catalog of the tables in this dataset: one row per table.',
    columns: [
      ['table_name', 'STRING'],
      ['layer', 'STRING'],
      ['data_source', 'STRING'],
      ['description', 'STRING'],
    ],
  },
  fact__orders: {
    layer: 'mart',
    dataSource: 'shop + pos',
    description: 'One row per order, all channels; revenue in the brand currency after discounts.',
    columns: [
      ['order_id', 'STRING'],
      ['order_date', 'DATE'],
      ['order_ts', 'TIMESTAMP'],
      ['customer_id', 'STRING'],
      ['product_id', 'STRING'],
      ['channel', 'STRING'],
      ['quantity', 'INT64'],
      ['revenue', 'FLOAT64'],
      ['currency', 'STRING'],
    ],
  },
  dim__customers: {
    layer: 'mart',
    dataSource: 'crm',
    description: 'One row per customer: signup date, country and loyalty segment.',
    columns: [
      ['customer_id', 'STRING'],
      ['signup_date', 'DATE'],
      ['country', 'STRING'],
      ['segment', 'STRING'],
    ],
  },
  dim__products: {
    layer: 'mart',
    dataSource: 'pim',
    description: 'One row per product with its category and list price.',
    columns: [
      ['product_id', 'STRING'],
      ['name', 'STRING'],
      ['category', 'STRING'],
      ['unit_price', 'FLOAT64'],
    ],
  },
  agg__daily_revenue: {
    layer: 'mart',
    dataSource: 'fact__orders',
    description: 'Orders and revenue per day and channel; sums match fact__orders.',
    columns: [
      ['day', 'DATE'],
      ['channel', 'STRING'],
      ['orders', 'INT64'],
      ['revenue', 'FLOAT64'],
    ],
  },
  report__monthly_kpis: {
    layer: 'mart',
    dataSource: 'fact__orders',
    description: 'Monthly orders, revenue, distinct customers and average order value; sums match fact__orders.',
    columns: [
      ['month', 'DATE'],
      ['orders', 'INT64'],
      ['revenue', 'FLOAT64'],
      ['customers', 'INT64'],
      ['aov', 'FLOAT64'],
      ['is_partial_month', 'BOOL'],
    ],
  },
  raw__web_events: {
    layer: 'raw',
    dataSource: 'web analytics',
    description: 'Raw storefront events; customer_id is null for anonymous visitors.',
    columns: [
      ['event_id', 'STRING'],
      ['event_ts', 'TIMESTAMP'],
      ['customer_id', 'STRING'],
      ['event_name', 'STRING'],
      ['page', 'STRING'],
    ],
  },
};

/**
 * Date-sharded tables, the layout of BigQuery's Google Analytics export (`events_YYYYMMDD`), read through a wildcard
 * table (`events_*` with `_TABLE_SUFFIX`). One dataset has them: one shard per day for the `days` days ending
 * yesterday, each holding that day's rows of `source` (so the shards' union equals `source` over those days).
 * More than 50 shards, so a wildcard over them crosses the dry-run gate's 50-table rule.
 */
export const SHARDED = {
  dataset: 'umbrella',
  prefix: 'events_',
  days: 60,
  source: 'raw__web_events',
  layer: 'raw',
  description: "One day of raw storefront events (that day's rows of raw__web_events); query all days as events_*.",
};

/** The shard names of SHARDED for `today`, oldest first: events_YYYYMMDD for each of the `days` days before it. */
export function shardNames(today) {
  const end = Date.parse(`${today}T00:00:00Z`);
  return Array.from({ length: SHARDED.days }, (_, k) => {
    const day = new Date(end - (SHARDED.days - k) * 86_400_000).toISOString().slice(0, 10);
    return `${SHARDED.prefix}${day.replaceAll('-', '')}`;
  });
}

/** The columns and docs of a table of a dataset: TABLES, or SHARDED's for one of its shards. */
export function tableSpec(dataset, table, today) {
  if (Object.hasOwn(TABLES, table)) return TABLES[table];
  if (dataset.toLowerCase() !== SHARDED.dataset || !shardNames(today).includes(table)) return undefined;
  const src = TABLES[SHARDED.source];
  return { layer: SHARDED.layer, dataSource: SHARDED.source, description: SHARDED.description, columns: src.columns };
}

/** The demo routine in every dataset, so dry runs can report `referencedRoutines`. */
export const DEMO_ROUTINE = {
  name: 'order_size_band',
  sql: "CASE WHEN quantity >= 3 THEN 'bulk' WHEN quantity = 2 THEN 'pair' ELSE 'single' END",
  params: ['quantity'],
};

/**
 * @typedef {[name: string, nouns: string[], minPrice: number, maxPrice: number]} Category
 * @typedef {object} DatasetShape
 * @property {string} name
 * @property {number} seed
 * @property {number} orders
 * @property {number} customers
 * @property {number} products
 * @property {number} events
 * @property {string} currency
 * @property {[web: number, store: number]} channelWeights  the rest is marketplace
 * @property {string[]} countries
 * @property {string[]} adjectives
 * @property {Category[]} categories
 */

/**
 * Per-dataset shape: sizes from docs/demo-data.md ("acme" 500,000 orders, others 20,000), plus brand flavour.
 * @type {DatasetShape[]}
 */
export const DATASETS = [
  {
    name: 'acme',
    seed: 1000,
    orders: 500_000,
    customers: 60_000,
    products: 240,
    events: 100_000,
    currency: 'USD',
    channelWeights: [0.55, 0.3],
    countries: ['US', 'US', 'US', 'US', 'CA', 'CA', 'GB', 'DE', 'AU', 'NZ'],
    adjectives: ['Summit', 'Ridge', 'Trailhead', 'Alpine', 'Basecamp', 'Canyon', 'Glacier', 'Timberline'],
    categories: [
      ['Tents', ['2P Tent', '4P Tent', 'Ultralight Tent', 'Tarp Shelter'], 120, 600],
      ['Backpacks', ['Daypack 20L', 'Trek Pack 45L', 'Expedition Pack 65L', 'Hydration Vest'], 40, 300],
      ['Footwear', ['Hiking Boot', 'Trail Runner', 'Approach Shoe', 'Camp Sandal'], 50, 220],
      ['Apparel', ['Rain Shell', 'Fleece Jacket', 'Down Parka', 'Base Layer'], 30, 350],
      ['Climbing', ['Harness', 'Chalk Bag', 'Quickdraw Set', 'Climbing Rope 60m'], 15, 250],
      ['Camp Kitchen', ['Stove', 'Cook Set', 'Insulated Mug', 'Water Filter'], 15, 150],
    ],
  },
  {
    name: 'globex',
    seed: 2000,
    orders: 20_000,
    customers: 3_000,
    products: 60,
    events: 10_000,
    currency: 'EUR',
    channelWeights: [0.7, 0.2],
    countries: ['DE', 'DE', 'FR', 'FR', 'NL', 'IT', 'ES', 'BE'],
    adjectives: ['Classic', 'Reserve', 'Signature', 'Barista', 'Morning', 'Single Origin'],
    categories: [
      ['Coffee Beans', ['Ethiopia Yirgacheffe', 'Colombia Huila', 'House Espresso', 'Decaf Blend'], 12, 28],
      ['Brewing Equipment', ['Pour-Over Kit', 'French Press', 'Burr Grinder', 'Gooseneck Kettle'], 25, 220],
      ['Subscriptions', ['Monthly Beans', 'Espresso Club', 'Office Box', 'Gift Plan'], 20, 90],
      ['Merchandise', ['Ceramic Mug', 'Travel Tumbler', 'Tote Bag', 'Barista Apron'], 8, 35],
    ],
  },
  {
    name: 'umbrella',
    seed: 3000,
    orders: 20_000,
    customers: 4_000,
    products: 80,
    events: 10_000,
    currency: 'GBP',
    channelWeights: [0.5, 0.35],
    countries: ['GB', 'GB', 'GB', 'IE', 'GB', 'IE'],
    adjectives: ['Daily', 'Pro', 'Essential', 'Advanced', 'Gentle', 'Active'],
    categories: [
      ['Supplements', ['Vitamin D3', 'Omega-3', 'Magnesium', 'Probiotic'], 9, 45],
      ['Devices', ['Blood Pressure Monitor', 'Smart Thermometer', 'Pulse Oximeter', 'Fitness Band'], 25, 180],
      ['Personal Care', ['Sunscreen SPF50', 'Hand Sanitizer', 'Moisturizer', 'Electric Toothbrush'], 5, 90],
      ['Wellness', ['Yoga Mat', 'Sleep Mask', 'Massage Gun', 'Meditation Course'], 10, 160],
    ],
  },
];

/** Days of order history, ending yesterday. */
export const HISTORY_DAYS = 400;
/** Share of each dataset's customers who signed up before the order history starts, and over how many days. */
const PRE_WINDOW_CUSTOMER_SHARE = 0.3;
const PRE_WINDOW_DAYS = 700;

const FIXED_WIDTH_BYTES = 8;

/** SQL string literal. */
export function sqlString(s) {
  return `'${String(s).replaceAll("'", "''")}'`;
}

/** SQL quoted identifier. */
export function sqlIdent(s) {
  return `"${String(s).replaceAll('"', '""')}"`;
}

function sqlList(values) {
  return `[${values.map((v) => (typeof v === 'number' ? String(v) : sqlString(v))).join(', ')}]`;
}

function daysSinceEpoch(isoDate) {
  return Math.round(Date.parse(`${isoDate}T00:00:00Z`) / 86_400_000);
}

/** UTC calendar date of `now` as YYYY-MM-DD. */
export function utcToday(now = Date.now()) {
  return new Date(now).toISOString().slice(0, 10);
}

export function assertIsoDate(today) {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(today) || Number.isNaN(Date.parse(`${today}T00:00:00Z`))) {
    throw new Error(`today must be an ISO date YYYY-MM-DD, got ${JSON.stringify(today)}`);
  }
}

// murmur3's 32-bit finaliser over (row, salt): uniform, stateless and identical on every DuckDB version,
// unlike hash() whose output DuckDB may change between releases.
const RANDOM_MACROS = `
CREATE OR REPLACE TEMP MACRO _fm1(x) AS xor(x, x >> 16);
CREATE OR REPLACE TEMP MACRO _fm2(x) AS (x * 2246822507) % 4294967296;
CREATE OR REPLACE TEMP MACRO _fm3(x) AS xor(x, x >> 13);
CREATE OR REPLACE TEMP MACRO _fm4(x) AS (x * 3266489909) % 4294967296;
CREATE OR REPLACE TEMP MACRO rnd(i, s) AS
  _fm1(_fm4(_fm3(_fm2(_fm1((CAST(i AS UBIGINT) * 2654435761 + CAST(s AS UBIGINT) * 40503 + 12345) % 4294967296))))) / 4294967296.0;
CREATE OR REPLACE TEMP MACRO pick(list, r) AS list_extract(list, 1 + CAST(floor(r * len(list)) AS BIGINT));
`;

/**
 * SQL that creates one dataset's tables in catalog "service-v1" (TimeZone must be UTC, rnd() defined).
 * @param {(typeof DATASETS)[number]} ds
 * @param {string} today YYYY-MM-DD
 */
export function datasetStatements(ds, today, project = PROJECT) {
  const S = `${sqlIdent(project)}.${sqlIdent(ds.name)}`;
  const T = `DATE ${sqlString(today)}`;
  const seed = ds.seed;
  const cats = ds.categories;
  const [wWeb, wStore] = ds.channelWeights;
  const nouns = `[${cats.map((c) => sqlList(c[1])).join(', ')}]`;
  const stmts = [`CREATE SCHEMA ${S}`];

  // List price of product number `i` (1-based); fact__orders uses the same expression.
  const priceOf = (i) => `CAST(round(list_extract(${sqlList(cats.map((c) => c[2]))}, 1 + (${i} - 1) % ${cats.length})
        + (list_extract(${sqlList(cats.map((c) => c[3]))}, 1 + (${i} - 1) % ${cats.length})
          - list_extract(${sqlList(cats.map((c) => c[2]))}, 1 + (${i} - 1) % ${cats.length})) * rnd(${i}, ${seed + 3}), 0) - 0.01 AS DOUBLE)`;
  stmts.push(`CREATE TABLE ${S}.dim__products AS
    WITH p AS (SELECT range + 1 AS i, range % ${cats.length} AS c FROM range(${ds.products}))
    SELECT printf('P%04d', i) AS product_id,
      pick(${sqlList(ds.adjectives)}, rnd(i, ${seed + 1})) || ' ' || pick(list_extract(${nouns}, 1 + c), rnd(i, ${seed + 2})) AS name,
      list_extract(${sqlList(cats.map((c) => c[0]))}, 1 + c) AS category,
      ${priceOf('i')} AS unit_price
    FROM p ORDER BY i`);

  // Customers arrive the way orders do. A share signed up before the window; the others sign up over it with the
  // orders' own distribution of days (below), so monthly signups grow with monthly orders. Customers are
  // numbered in signup order: by day d of the window, customers 1..arrivedBy(d) exist, and an order placed on
  // day d goes to one of them (older customers more often), so nobody orders before signing up.
  const C = ds.customers;
  const P = Math.round(C * PRE_WINDOW_CUSTOMER_SHARE);
  // Share of the window's orders placed before fraction u of it: 60% uniform, 40% with density 2u.
  const orderShare = (u) => `(0.6 * (${u}) + 0.4 * (${u}) * (${u}))`;
  const arrivedBy = (d) => `(${P} + CAST(floor(${C - P} * ${orderShare(`${d} / ${HISTORY_DAYS}.0`)}) AS INTEGER))`;
  // The inverse: the window fraction by which customer j (> P) has signed up, solving 0.4u^2 + 0.6u = q.
  const signupFraction = (j) => `((sqrt(0.36 + 1.6 * ((${j}) - ${P}) / ${C - P}.0) - 0.6) / 0.8)`;

  // Order days: 60% uniform over the window, 40% skewed towards recent days (a growing shop); every day
  // of the window, including the first, gets orders. Prices are recomputed from the product index with the
  // same formula as dim__products, which avoids a join.
  stmts.push(`CREATE TABLE ${S}.fact__orders AS
    WITH days AS (
      SELECT range AS i,
        least(${HISTORY_DAYS - 1}, CAST(CASE WHEN rnd(range, ${seed + 10}) < 0.6 THEN floor(rnd(range, ${seed + 11}) * ${HISTORY_DAYS})
          ELSE floor(${HISTORY_DAYS} * sqrt(rnd(range, ${seed + 11}))) END AS INTEGER)) AS d
      FROM range(${ds.orders})
    ),
    base AS (
      SELECT range AS i, days.d,
        CAST(floor(rnd(range, ${seed + 12}) * 86400) AS BIGINT) AS sec,
        least(${arrivedBy('days.d')}, 1 + CAST(floor(${arrivedBy('days.d')} * pow(rnd(range, ${seed + 13}), 1.6)) AS INTEGER)) AS cust,
        least(${ds.products}, 1 + CAST(floor(${ds.products} * pow(rnd(range, ${seed + 14}), 1.4)) AS INTEGER)) AS prod,
        rnd(range, ${seed + 15}) AS rc,
        1 + CAST(floor(pow(rnd(range, ${seed + 16}), 4) * 5) AS BIGINT) AS quantity,
        rnd(range, ${seed + 17}) AS rdisc
      FROM range(${ds.orders}) JOIN days ON days.i = range
    )
    SELECT printf('ORD-%07d', row_number() OVER (ORDER BY d, sec, i)) AS order_id,
      ${T} - ${HISTORY_DAYS} + d AS order_date,
      to_timestamp((${daysSinceEpoch(today)} - ${HISTORY_DAYS} + d) * 86400 + sec) AS order_ts,
      printf('C%06d', cust) AS customer_id,
      printf('P%04d', prod) AS product_id,
      CASE WHEN rc < ${wWeb} THEN 'web' WHEN rc < ${wWeb + wStore} THEN 'store' ELSE 'marketplace' END AS channel,
      quantity,
      CAST(round(quantity * ${priceOf('prod')} * CASE WHEN rdisc < 0.1 THEN 0.8 WHEN rdisc < 0.25 THEN 0.9 ELSE 1.0 END, 2) AS DOUBLE) AS revenue,
      ${sqlString(ds.currency)} AS currency
    FROM base`);

  // Signup days as above: customers 1..P over the ${PRE_WINDOW_DAYS} days before the window (older numbers
  // earlier), the others on the window day their number falls on, which is never after their first order.
  stmts.push(`CREATE TABLE ${S}.dim__customers AS
    WITH c AS (SELECT range + 1 AS i, rnd(range + 1, ${seed + 24}) AS rs FROM range(${C}))
    SELECT printf('C%06d', c.i) AS customer_id,
      CASE WHEN c.i <= ${P} THEN ${T} - ${HISTORY_DAYS} - ${PRE_WINDOW_DAYS} + CAST(floor((c.i - 1) * ${PRE_WINDOW_DAYS}.0 / ${Math.max(P, 1)}) AS INTEGER)
        ELSE ${T} - ${HISTORY_DAYS} + least(${HISTORY_DAYS - 1}, CAST(floor(${HISTORY_DAYS} * ${signupFraction('c.i')}) AS INTEGER)) END AS signup_date,
      pick(${sqlList(ds.countries)}, rnd(c.i, ${seed + 23})) AS country,
      CASE WHEN rs < 0.05 THEN 'vip' WHEN rs < 0.3 THEN 'loyalty' ELSE 'standard' END AS segment
    FROM c
    ORDER BY c.i`);

  stmts.push(`CREATE TABLE ${S}.agg__daily_revenue AS
    SELECT order_date AS day, channel, CAST(count(*) AS BIGINT) AS orders, CAST(round(sum(revenue), 2) AS DOUBLE) AS revenue
    FROM ${S}.fact__orders GROUP BY ALL ORDER BY day, channel`);

  stmts.push(`CREATE TABLE ${S}.report__monthly_kpis AS
    SELECT CAST(date_trunc('month', order_date) AS DATE) AS month, CAST(count(*) AS BIGINT) AS orders,
      CAST(round(sum(revenue), 2) AS DOUBLE) AS revenue, CAST(count(DISTINCT customer_id) AS BIGINT) AS customers,
      CAST(round(sum(revenue) / count(*), 2) AS DOUBLE) AS aov,
      -- The history's first month (unless it began on the 1st) and the month of yesterday (unless it was the last).
      (month < ${T} - ${HISTORY_DAYS} OR last_day(month) > ${T} - 1) AS is_partial_month
    FROM ${S}.fact__orders GROUP BY 1 ORDER BY 1`);

  const catSlugs = cats.map((c) => c[0].toLowerCase().replaceAll(' ', '-'));
  const searchTerms = cats.map((c) => c[1][0].toLowerCase().split(' ')[0]);
  stmts.push(`CREATE TABLE ${S}.raw__web_events AS
    WITH e AS (
      SELECT range AS i,
        to_timestamp((${daysSinceEpoch(today)} - ${HISTORY_DAYS} + CAST(floor(rnd(range, ${seed + 31}) * ${HISTORY_DAYS}) AS INTEGER)) * 86400
          + CAST(floor(rnd(range, ${seed + 32}) * 86400) AS BIGINT)) AS event_ts,
        CASE WHEN rnd(range, ${seed + 33}) < 0.35 THEN NULL
          ELSE printf('C%06d', least(${ds.customers}, 1 + CAST(floor(${ds.customers} * rnd(range, ${seed + 34})) AS INTEGER))) END AS customer_id,
        rnd(range, ${seed + 35}) AS rn, rnd(range, ${seed + 36}) AS rp, rnd(range, ${seed + 37}) AS rq
      FROM range(${ds.events})
    )
    SELECT printf('EVT-%08d', row_number() OVER (ORDER BY event_ts, i)) AS event_id, event_ts, customer_id,
      CASE WHEN rn < 0.6 THEN 'page_view' WHEN rn < 0.72 THEN 'search' WHEN rn < 0.87 THEN 'add_to_cart'
        WHEN rn < 0.95 THEN 'begin_checkout' ELSE 'purchase' END AS event_name,
      CASE WHEN rn < 0.6 THEN (CASE WHEN rp < 0.25 THEN '/' WHEN rp < 0.45 THEN '/collections/' || pick(${sqlList(catSlugs)}, rq)
          ELSE '/products/' || printf('P%04d', least(${ds.products}, 1 + CAST(floor(${ds.products} * rq) AS INTEGER))) END)
        WHEN rn < 0.72 THEN '/search?q=' || pick(${sqlList(searchTerms)}, rq)
        WHEN rn < 0.87 THEN '/cart' WHEN rn < 0.95 THEN '/checkout' ELSE '/checkout/thank-you' END AS page
    FROM e`);

  const shards = ds.name === SHARDED.dataset ? shardNames(today) : [];
  for (const shard of shards) {
    const day = `${shard.slice(SHARDED.prefix.length, -4)}-${shard.slice(-4, -2)}-${shard.slice(-2)}`;
    // A view, not a copy: 60 small tables would double the data file (each table takes its own storage blocks),
    // and to every query and API call here a shard is a table like any other (the data is read-only).
    stmts.push(`CREATE VIEW ${S}.${sqlIdent(shard)} AS
      SELECT * FROM ${S}.${sqlIdent(SHARDED.source)} WHERE CAST(event_ts AS DATE) = DATE ${sqlString(day)} ORDER BY event_ts`);
  }
  // Every table, shards included (INFORMATION_SCHEMA lists each shard, as BigQuery's does).
  const allTables = [...Object.entries(TABLES), ...shards.map((name) => [name, tableSpec(ds.name, name, today)])];

  const metaRows = Object.entries(TABLES).map(
    ([name, t]) => `(${sqlString(name)}, ${sqlString(t.layer)}, ${sqlString(t.dataSource)}, ${sqlString(t.description)})`,
  );
  stmts.push(`CREATE TABLE ${S}.table_metadata AS
    SELECT * FROM (VALUES ${metaRows.join(', ')}) AS v(table_name, layer, data_source, description)`);

  // BigQuery's per-dataset INFORMATION_SCHEMA views as plain tables; the dialect rewrite maps
  // `ds.INFORMATION_SCHEMA.COLUMNS` onto them.
  const colRows = [];
  for (const [table, t] of allTables) {
    t.columns.forEach(([col, type], idx) => {
      colRows.push(`(${sqlString(table)}, ${sqlString(col)}, ${idx + 1}, ${sqlString(type)})`);
    });
  }
  stmts.push(`CREATE TABLE ${S}."INFORMATION_SCHEMA.COLUMNS" AS
    SELECT ${sqlString(project)} AS table_catalog, ${sqlString(ds.name)} AS table_schema, table_name, column_name,
      CAST(ordinal_position AS BIGINT) AS ordinal_position, 'YES' AS is_nullable, data_type, 'NEVER' AS is_generated,
      CAST(NULL AS VARCHAR) AS generation_expression, CAST(NULL AS VARCHAR) AS is_stored, 'NO' AS is_hidden,
      CAST(NULL AS VARCHAR) AS is_updatable, 'NO' AS is_system_defined, 'NO' AS is_partitioning_column,
      CAST(NULL AS BIGINT) AS clustering_ordinal_position, CAST(NULL AS VARCHAR) AS collation_name,
      'NULL' AS column_default, CAST(NULL AS VARCHAR) AS rounding_mode
    FROM (VALUES ${colRows.join(', ')}) AS v(table_name, column_name, ordinal_position, data_type)
    ORDER BY table_name, ordinal_position`);
  const tableRows = allTables.map(([table, t]) => {
    const ddl = `CREATE TABLE \`${project}.${ds.name}.${table}\`\n(\n${t.columns.map(([c, ty]) => `  ${c} ${ty}`).join(',\n')}\n);`;
    return `(${sqlString(table)}, ${sqlString(ddl)})`;
  });
  stmts.push(`CREATE TABLE ${S}."INFORMATION_SCHEMA.TABLES" AS
    SELECT ${sqlString(project)} AS table_catalog, ${sqlString(ds.name)} AS table_schema, table_name, 'BASE TABLE' AS table_type,
      'YES' AS is_insertable_into, 'NO' AS is_typed, CAST(${T} AS TIMESTAMPTZ) AS creation_time, ddl
    FROM (VALUES ${tableRows.join(', ')}) AS v(table_name, ddl) ORDER BY table_name`);

  stmts.push(`CREATE MACRO ${S}.${DEMO_ROUTINE.name}(${DEMO_ROUTINE.params.join(', ')}) AS ${DEMO_ROUTINE.sql}`);
  return stmts;
}

/** BigQuery's billing size of INT64, FLOAT64, DATE and TIMESTAMP values (STRING: 2 + UTF-8 bytes; NULL: 0). */
/**
 * Builds the whole demo database into `path` (which must not exist). Generation runs in memory and the
 * finished catalog is copied to the file once: writing table by table to the file costs several times more.
 */
export async function buildDemoDatabase(path, today, { threads = 2, datasets = DATASETS, project = PROJECT } = {}) {
  assertIsoDate(today);
  const instance = await DuckDBInstance.create(':memory:', { threads: String(threads) });
  const conn = await instance.connect();
  const P = sqlIdent(project);
  const META = `${P}.${sqlIdent(META_SCHEMA)}`;
  try {
    await conn.run(`SET TimeZone = 'UTC'`);
    await conn.run(`ATTACH ':memory:' AS ${P}`);
    await conn.run(RANDOM_MACROS);
    for (const ds of datasets) {
      for (const stmt of datasetStatements(ds, today, project)) await conn.run(stmt);
    }
    await conn.run(`CREATE SCHEMA ${META}`);
    await conn.run(`CREATE TABLE ${META}.column_bytes
      (dataset VARCHAR, table_name VARCHAR, column_name VARCHAR, bytes BIGINT, row_count BIGINT)`);
    const cols = await conn.runAndReadAll(`SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns()
      WHERE database_name = ${sqlString(project)} AND schema_name <> ${sqlString(META_SCHEMA)} ORDER BY ALL`);
    const byTable = new Map();
    for (const [schema, table, column, type] of cols.getRowsJS()) {
      const c = sqlIdent(String(column));
      const bytes = type === 'VARCHAR' ? `coalesce(sum(2 + strlen(${c})), 0)` : `${FIXED_WIDTH_BYTES} * count(${c})`;
      const key = `${sqlIdent(String(schema))}.${sqlIdent(String(table))}`;
      const list = byTable.get(key) ?? [];
      list.push(
        `struct_pack(d := ${sqlString(String(schema))}, t := ${sqlString(String(table))}, c := ${sqlString(String(column))}, b := ${bytes})`,
      );
      byTable.set(key, list);
    }
    for (const [key, structs] of byTable) {
      // One scan per table yields every column's size; unnest turns the list into rows.
      await conn.run(`INSERT INTO ${META}.column_bytes
        SELECT s.d, s.t, s.c, s.b, n FROM (SELECT unnest([${structs.join(', ')}]) AS s, count(*) AS n FROM ${P}.${key})`);
    }
    await conn.run(`ATTACH ${sqlString(path)} AS out_db`);
    await conn.run(`COPY FROM DATABASE ${P} TO out_db`);
    await conn.run('DETACH out_db');
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/** Identifies this generator's output: a change to this file or to DuckDB makes a new cache file. */
function generatorFingerprint() {
  const src = readFileSync(new URL(import.meta.url));
  return createHash('sha256').update(src).update(duckdbVersion()).digest('hex').slice(0, 12);
}

export function defaultCacheDir() {
  return join(tmpdir(), 'bq-local-warehouse');
}

/**
 * Returns the path of the demo database for `today`, generating it when no cached copy exists.
 * Concurrent callers (parallel test processes) each build to a private temp name and rename atomically.
 * The datasets are hosted under `project` (their catalog name and INFORMATION_SCHEMA's table_catalog).
 * @param {{ today: string, cacheDir?: string, threads?: number, project?: string }} opts
 * @returns {Promise<{ path: string, generated: boolean, ms: number }>}
 */
export async function ensureDemoDatabase({ today, cacheDir = defaultCacheDir(), threads = 2, project = PROJECT }) {
  assertIsoDate(today);
  const started = performance.now();
  mkdirSync(cacheDir, { recursive: true });
  const path = join(cacheDir, `${project}-${today}-${generatorFingerprint()}.duckdb`);
  if (existsSync(path)) return { path, generated: false, ms: performance.now() - started };
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await buildDemoDatabase(tmp, today, { threads, project });
    renameSync(tmp, path);
  } finally {
    rmSync(tmp, { force: true });
    rmSync(`${tmp}.wal`, { force: true });
  }
  pruneCache(cacheDir, path, project);
  return { path, generated: true, ms: performance.now() - started };
}

/** Removes cached databases older than two days so the cache does not grow without bound. */
function pruneCache(cacheDir, keep, project) {
  const cutoff = Date.now() - 2 * 86_400_000;
  for (const name of readdirSync(cacheDir)) {
    const p = join(cacheDir, name);
    if (p === keep || !name.startsWith(`${project}-`)) continue;
    try {
      if (statSync(p).mtimeMs < cutoff) rmSync(p, { force: true });
    } catch {
      // Another process pruned it first.
    }
  }
}
