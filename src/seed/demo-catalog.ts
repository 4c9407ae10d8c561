import { KEY_PREFIX } from '../auth/api-keys';
import { hashPassword } from '../auth/passwords';
import { sha256Hex } from '../lib/ids';
import { assertKnownSlots, templateSlots } from '../catalog/template';
import { inlineStatement } from '../features/memories/store';
import { demoMemoryStatements } from './demo-memories';

/**
 * The demo tenants and catalog of `docs/demo-data.md`, as idempotent SQL with every value inlined as a quoted
 * literal. The same statements serve D1 `batch` in tests and the local D1 in `npm run dev`, which reapplies them
 * on every start. They only add what is missing (`INSERT ... ON CONFLICT DO NOTHING`): a row that exists stays
 * as it is, so a demo key an operator revoked, a limit or a name they changed survive a restart.
 */

export const DEMO_ORGS = {
  demo: { id: 'org_demo', name: 'Demo Retail Group' },
  other: { id: 'org_other', name: 'Other Co' },
} as const;

export const DEMO_BRANDS = [
  { id: 'brand_acme', orgId: 'org_demo', name: 'Acme Outdoor', dataset: 'acme' },
  { id: 'brand_globex', orgId: 'org_demo', name: 'Globex Coffee', dataset: 'globex' },
  { id: 'brand_initech', orgId: 'org_demo', name: 'Initech Labs', dataset: null },
  { id: 'brand_umbrella', orgId: 'org_other', name: 'Umbrella Health', dataset: 'umbrella' },
] as const;

export const DEMO_KEY_IDS = { org: 'key_demo_org', brand: 'key_demo_brand', other: 'key_other_org' } as const;
export const DEMO_USER_IDS = { org: 'user_demo_org_admin', brand: 'user_demo_brand_admin' } as const;

export interface DemoSeedInput {
  /** Milliseconds since epoch: created_at of every row and the reference day of the saved queries' windows. */
  now: number;
  /** Secrets of the three demo API keys (org_demo org key, brand_acme brand key, org_other org key). */
  keys: { org: string; brand: string; other: string };
  /** admins.org administers org_demo; admins.brand administers brand_acme only. */
  admins: { org: { email: string; password: string }; brand: { email: string; password: string } };
  /**
   * Default false. True when these secrets are new but the database may already hold demo rows made with others
   * (`npm run dev` lost its credentials file while its D1 stayed): the statements then start with one UPDATE per
   * demo key and demo admin, by id, that replaces the stored secret hash (and prefix) or password (clearing a
   * sign-in lock, as `user set-password` does) and returns the row as `{ rotated, revoked_at }` when it exists.
   * Nothing else changes: other keys and users, names, limits and a revocation stay as they are.
   */
  rotate?: boolean;
}

type Literal = string | number | null;

/** NUL ends a C string inside SQLite and lone surrogates are not valid UTF-8: neither can be stored faithfully. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** An SQLite literal: strings single-quoted with quotes doubled (SQLite's only escape); numbers safe integers. */
export function sqlLiteral(value: Literal): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new TypeError(`not a safe integer: ${value}`);
    return String(value);
  }
  if (value.includes('\0') || LONE_SURROGATE.test(value)) throw new TypeError('text contains a NUL or invalid Unicode');
  return `'${value.replaceAll("'", "''")}'`;
}

/**
 * `INSERT ... ON CONFLICT DO NOTHING` of one row: inserted when missing, left alone when any row with the same
 * key (or another unique value) is already there.
 */
function insertMissing(table: string, row: Record<string, Literal>): string {
  const cols = Object.keys(row);
  return `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((c) => sqlLiteral(row[c] ?? null)).join(', ')}) ON CONFLICT DO NOTHING`;
}

export interface Section {
  id: string;
  name: string;
  description: string;
  sql: string;
  narrativeHints?: string;
  chartSpec?: unknown;
}

export interface DemoReport {
  id: string;
  type: 'system' | 'org' | 'brand';
  orgId?: string;
  brandId?: string;
  name: string;
  description: string | null;
  instructions: string | null;
  dashboardConfig: unknown;
  sections: Section[];
}

/** Templates are plain SQL that BigQuery and the local DuckDB warehouse both run; dates are inclusive. */
const PERIOD = `order_date BETWEEN DATE '{start_date}' AND DATE '{end_date}'`;
const t = (table: string) => `\`service-v1.{dataset}.${table}\``;
/** Orders and revenue per channel for the period: a section of the system overview and of Umbrella's own report. */
const REVENUE_BY_CHANNEL =
  `SELECT channel, COUNT(*) AS orders, ROUND(SUM(revenue), 2) AS revenue\n` +
  `FROM ${t('fact__orders')}\nWHERE ${PERIOD}\nGROUP BY channel\nORDER BY revenue DESC`;

export const DEMO_REPORTS: DemoReport[] = [
  {
    id: 'rpt_business_overview',
    type: 'system',
    name: 'Business Overview',
    description: 'Headline sales KPIs, channel mix, daily trend and top products for the period.',
    instructions:
      '## Business Overview\n\nRun every section with the same `period`. Lead with the headline KPIs, then explain ' +
      'the channel mix and any spikes in the daily trend. Revenue is in the brand currency.',
    dashboardConfig: {
      layout: 'grid',
      columns: 2,
      tiles: [
        { queryId: 'rq_overview_kpis', kind: 'kpi', span: 2 },
        { queryId: 'rq_overview_channels', kind: 'chart' },
        { queryId: 'rq_overview_daily', kind: 'chart' },
        { queryId: 'rq_overview_top_products', kind: 'table', span: 2 },
      ],
    },
    sections: [
      {
        id: 'rq_overview_kpis',
        name: 'Headline KPIs',
        description: 'Orders, customers, revenue and average order value.',
        sql:
          `SELECT COUNT(*) AS orders, COUNT(DISTINCT customer_id) AS customers, ROUND(SUM(revenue), 2) AS revenue,\n` +
          `       ROUND(SUM(revenue) / NULLIF(COUNT(*), 0), 2) AS aov\n` +
          `FROM ${t('fact__orders')}\nWHERE ${PERIOD}`,
        narrativeHints: 'State revenue and orders first; compare AOV with the previous period if the reader asks.',
      },
      {
        id: 'rq_overview_channels',
        name: 'Revenue by channel',
        description: 'Orders and revenue per sales channel.',
        sql: REVENUE_BY_CHANNEL,
        narrativeHints: 'Name the leading channel and its share of revenue.',
        chartSpec: { type: 'bar', x: 'channel', y: 'revenue' },
      },
      {
        id: 'rq_overview_daily',
        name: 'Daily revenue',
        description: 'Revenue and orders per day, all channels.',
        sql:
          `SELECT day, SUM(orders) AS orders, ROUND(SUM(revenue), 2) AS revenue\n` +
          `FROM ${t('agg__daily_revenue')}\nWHERE day BETWEEN DATE '{start_date}' AND DATE '{end_date}'\n` +
          `GROUP BY day\nORDER BY day`,
        narrativeHints: 'Point out the best and worst days and any trend.',
        chartSpec: { type: 'line', x: 'day', y: ['revenue', 'orders'] },
      },
      {
        id: 'rq_overview_top_products',
        name: 'Top 10 products',
        description: 'Best-selling products by revenue.',
        sql:
          `SELECT p.product_id, p.name, p.category, SUM(o.quantity) AS units, ROUND(SUM(o.revenue), 2) AS revenue\n` +
          `FROM ${t('fact__orders')} AS o\nJOIN ${t('dim__products')} AS p ON p.product_id = o.product_id\n` +
          `WHERE o.order_date BETWEEN DATE '{start_date}' AND DATE '{end_date}'\n` +
          `GROUP BY p.product_id, p.name, p.category\nORDER BY revenue DESC\nLIMIT 10`,
      },
    ],
  },
  {
    id: 'rpt_demo_channel_mix',
    type: 'org',
    orgId: 'org_demo',
    name: 'Group Channel Mix',
    description: 'How each brand of the group sells across web, store and marketplace.',
    instructions: 'Compare channel shares between brands by running this report once per brand.',
    dashboardConfig: { layout: 'stack', tiles: [{ queryId: 'rq_mix_share', kind: 'chart' }, { queryId: 'rq_mix_marketplace', kind: 'chart' }] },
    sections: [
      {
        id: 'rq_mix_share',
        name: 'Channel share',
        description: 'Revenue and orders per channel.',
        sql:
          `SELECT channel, COUNT(*) AS orders, ROUND(SUM(revenue), 2) AS revenue\n` +
          `FROM ${t('fact__orders')}\nWHERE ${PERIOD}\nGROUP BY channel\nORDER BY channel`,
        chartSpec: { type: 'pie', label: 'channel', value: 'revenue' },
      },
      {
        id: 'rq_mix_marketplace',
        name: 'Marketplace orders by day',
        description: 'Daily marketplace orders.',
        sql:
          `SELECT order_date, COUNT(*) AS orders\nFROM ${t('fact__orders')}\n` +
          `WHERE channel = 'marketplace' AND ${PERIOD}\nGROUP BY order_date\nORDER BY order_date`,
      },
    ],
  },
  {
    id: 'rpt_demo_customer_health',
    type: 'org',
    orgId: 'org_demo',
    name: 'Customer Health',
    description: 'New customers and repeat buying.',
    instructions: null,
    dashboardConfig: null,
    sections: [
      {
        id: 'rq_health_new_customers',
        name: 'New customers by segment',
        description: 'Sign-ups in the period per segment.',
        sql:
          `SELECT segment, COUNT(*) AS new_customers\nFROM ${t('dim__customers')}\n` +
          `WHERE signup_date BETWEEN DATE '{start_date}' AND DATE '{end_date}'\nGROUP BY segment\nORDER BY new_customers DESC`,
      },
      {
        id: 'rq_health_repeat_buyers',
        name: 'Repeat buyers',
        description: 'Customers who ordered more than once in the period.',
        sql:
          `WITH buyers AS (\n  SELECT customer_id, COUNT(*) AS orders\n  FROM ${t('fact__orders')}\n  WHERE ${PERIOD}\n` +
          `  GROUP BY customer_id\n)\nSELECT COUNT(*) AS buyers, SUM(CASE WHEN orders > 1 THEN 1 ELSE 0 END) AS repeat_buyers\nFROM buyers`,
        narrativeHints: 'Give the repeat rate as repeat_buyers / buyers.',
      },
    ],
  },
  {
    id: 'rpt_acme_trading',
    type: 'brand',
    brandId: 'brand_acme',
    name: 'Acme Trading Review',
    description: "Acme Outdoor's own trading review: countries, site activity and the product range.",
    instructions: 'Acme reviews this every Monday with `period.cadence` WEEKLY.',
    dashboardConfig: { layout: 'stack', tiles: [{ queryId: 'rq_acme_countries', kind: 'table' }] },
    sections: [
      {
        id: 'rq_acme_countries',
        name: 'Orders by country',
        description: 'Orders and revenue by customer country.',
        sql:
          `SELECT c.country, COUNT(*) AS orders, ROUND(SUM(o.revenue), 2) AS revenue\n` +
          `FROM ${t('fact__orders')} AS o\nJOIN ${t('dim__customers')} AS c ON c.customer_id = o.customer_id\n` +
          `WHERE o.order_date BETWEEN DATE '{start_date}' AND DATE '{end_date}'\nGROUP BY c.country\nORDER BY revenue DESC`,
      },
      {
        id: 'rq_acme_web_events',
        name: 'Site activity',
        description: 'Web events by name.',
        sql:
          `SELECT event_name, COUNT(*) AS events\nFROM ${t('raw__web_events')}\n` +
          `WHERE CAST(event_ts AS DATE) BETWEEN DATE '{start_date}' AND DATE '{end_date}'\nGROUP BY event_name\nORDER BY events DESC`,
      },
      {
        id: 'rq_acme_range',
        name: 'Product range',
        description: 'Products and average list price per category (not time-bound).',
        sql:
          'SELECT category, COUNT(*) AS products, ROUND(AVG(unit_price), 2) AS avg_unit_price\n' +
          'FROM `service-v1.acme.dim__products`\nGROUP BY category\nORDER BY category',
      },
    ],
  },
  {
    id: 'rpt_globex_stores',
    type: 'brand',
    brandId: 'brand_globex',
    name: 'Globex Store Performance',
    description: 'Daily store sales for Globex Coffee.',
    instructions: null,
    dashboardConfig: null,
    sections: [
      {
        id: 'rq_globex_store_daily',
        name: 'Store sales by day',
        description: 'Store-channel revenue per day.',
        sql:
          `SELECT day, orders, ROUND(revenue, 2) AS revenue\nFROM ${t('agg__daily_revenue')}\n` +
          `WHERE channel = 'store' AND day BETWEEN DATE '{start_date}' AND DATE '{end_date}'\nORDER BY day`,
      },
    ],
  },
  {
    id: 'rpt_other_portfolio',
    type: 'org',
    orgId: 'org_other',
    name: 'Other Co Portfolio',
    description: 'Monthly KPIs across Other Co.',
    instructions: null,
    dashboardConfig: null,
    sections: [
      {
        id: 'rq_other_kpis',
        name: 'Monthly KPIs',
        description: 'Orders, revenue, customers and AOV per month.',
        sql:
          `SELECT month, orders, revenue, customers, aov\nFROM ${t('report__monthly_kpis')}\n` +
          `WHERE month BETWEEN DATE '{start_date}' AND DATE '{end_date}'\nORDER BY month`,
      },
    ],
  },
  {
    id: 'rpt_umbrella_clinics',
    type: 'brand',
    brandId: 'brand_umbrella',
    name: 'Umbrella Clinic Sales',
    description: 'Revenue by channel for Umbrella Health.',
    instructions: null,
    dashboardConfig: null,
    sections: [
      {
        id: 'rq_umbrella_channels',
        name: 'Revenue by channel',
        description: 'Orders and revenue per channel.',
        sql: REVENUE_BY_CHANNEL,
      },
    ],
  },
];

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The last full calendar month (UTC) before `now`: the window the dated saved queries are written against. */
function lastFullMonth(now: number): { start: string; end: string; label: string } {
  const d = new Date(now);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 0);
  const label = new Date(start).toLocaleString('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' });
  return { start: isoDay(start), end: isoDay(end), label };
}

interface SavedQuery {
  id: string;
  brandId: string;
  name: string;
  description: string;
  sql: string;
  tables: string[];
}

/** Concrete saved queries: two per provisioned brand, three for Acme. Fully qualified tables, no slots. */
export function demoSavedQueries(now: number): SavedQuery[] {
  const m = lastFullMonth(now);
  const out: SavedQuery[] = [];
  for (const b of DEMO_BRANDS) {
    if (b.dataset === null) continue;
    const ds = b.dataset;
    out.push(
      {
        id: `sq_${ds}_monthly_kpis`,
        brandId: b.id,
        name: 'Monthly KPIs',
        description: 'Orders, revenue, customers and average order value per month, newest first.',
        sql: `SELECT month, orders, revenue, customers, aov\nFROM \`service-v1.${ds}.report__monthly_kpis\`\nORDER BY month DESC`,
        tables: [`service-v1.${ds}.report__monthly_kpis`],
      },
      {
        id: `sq_${ds}_channels_last_month`,
        brandId: b.id,
        name: `Revenue by channel, ${m.label}`,
        description: `Orders and revenue per channel from ${m.start} to ${m.end}.`,
        sql:
          `SELECT channel, COUNT(*) AS orders, ROUND(SUM(revenue), 2) AS revenue\nFROM \`service-v1.${ds}.fact__orders\`\n` +
          `WHERE order_date BETWEEN DATE '${m.start}' AND DATE '${m.end}'\nGROUP BY channel\nORDER BY revenue DESC`,
        tables: [`service-v1.${ds}.fact__orders`],
      },
    );
  }
  out.push({
    id: 'sq_acme_top_customers',
    brandId: 'brand_acme',
    name: 'Top 20 customers (all time)',
    description: 'Customers with the highest lifetime revenue, with their country and segment.',
    sql:
      'SELECT o.customer_id, c.country, c.segment, COUNT(*) AS orders, ROUND(SUM(o.revenue), 2) AS revenue\n' +
      'FROM `service-v1.acme.fact__orders` AS o\nJOIN `service-v1.acme.dim__customers` AS c ON c.customer_id = o.customer_id\n' +
      'GROUP BY o.customer_id, c.country, c.segment\nORDER BY revenue DESC\nLIMIT 20',
    tables: ['service-v1.acme.fact__orders', 'service-v1.acme.dim__customers'],
  });
  return out;
}

function json(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/**
 * Builds the demo seed. Refuses (throws) key secrets the Worker would never accept, and any template with a
 * slot the server cannot fill (`assertKnownSlots`), so a bad catalog fails at seed time, not at run time.
 * `reports` defaults to the demo catalog; tests pass others to prove the refusal.
 */
export async function buildDemoSeed(input: DemoSeedInput, reports: readonly DemoReport[] = DEMO_REPORTS): Promise<string[]> {
  const { now } = input;
  const secrets = [input.keys.org, input.keys.brand, input.keys.other];
  for (const s of secrets) {
    if (!s.startsWith(KEY_PREFIX) || s.length < KEY_PREFIX.length + 22 || s.length > 200) {
      throw new Error(`demo key secrets must start with ${KEY_PREFIX} and carry at least 128 bits (22 base64url characters)`);
    }
  }
  if (new Set(secrets).size !== secrets.length) throw new Error('demo key secrets must be distinct');

  const keyRows = await Promise.all(
    [
      { id: DEMO_KEY_IDS.org, name: 'Demo org key (org_demo)', secret: input.keys.org, org_id: DEMO_ORGS.demo.id, brand_id: null },
      { id: DEMO_KEY_IDS.brand, name: 'Demo brand key (brand_acme)', secret: input.keys.brand, org_id: null, brand_id: 'brand_acme' },
      { id: DEMO_KEY_IDS.other, name: 'Other Co org key (org_other)', secret: input.keys.other, org_id: DEMO_ORGS.other.id, brand_id: null },
    ].map(async (k) => ({ ...k, prefix: k.secret.slice(0, KEY_PREFIX.length + 8), secret_hash: await sha256Hex(k.secret) })),
  );
  const admins = await Promise.all(
    [
      { id: DEMO_USER_IDS.org, name: 'Demo org admin', ...input.admins.org, org_id: DEMO_ORGS.demo.id, brand_id: null },
      { id: DEMO_USER_IDS.brand, name: 'Acme brand admin', ...input.admins.brand, org_id: null, brand_id: 'brand_acme' },
    ].map(async (a) => {
      if (!a.email.includes('@') || a.password.length === 0) throw new Error(`demo admin ${a.id} needs an email and a password`);
      return { ...a, pw: await hashPassword(a.password) };
    }),
  );

  const stmts: string[] = [];
  if (input.rotate === true) {
    // Before the inserts: a row that exists gets the new secret here and its insert below does nothing; a missing
    // row is not touched here and is inserted below with the same values.
    for (const k of keyRows) {
      stmts.push(
        `UPDATE api_keys SET secret_hash = ${sqlLiteral(k.secret_hash)}, prefix = ${sqlLiteral(k.prefix)} ` +
          `WHERE id = ${sqlLiteral(k.id)} RETURNING id AS rotated, revoked_at`,
      );
    }
    for (const a of admins) {
      stmts.push(
        `UPDATE users SET password_hash = ${sqlLiteral(a.pw.hash)}, password_salt = ${sqlLiteral(a.pw.salt)}, ` +
          `password_iterations = ${sqlLiteral(a.pw.iterations)}, failed_logins = 0, locked_until = NULL ` +
          `WHERE id = ${sqlLiteral(a.id)} RETURNING id AS rotated, NULL AS revoked_at`,
      );
    }
  }

  for (const o of Object.values(DEMO_ORGS)) stmts.push(insertMissing('organizations', { id: o.id, name: o.name, created_at: now }));
  for (const b of DEMO_BRANDS) {
    stmts.push(insertMissing('brands', { id: b.id, org_id: b.orgId, name: b.name, dataset: b.dataset, timezone: null, created_at: now }));
  }

  for (const k of keyRows) {
    stmts.push(
      insertMissing('api_keys', {
        id: k.id,
        name: k.name,
        prefix: k.prefix,
        secret_hash: k.secret_hash,
        org_id: k.org_id,
        brand_id: k.brand_id,
        max_bytes_billed: null,
        daily_query_limit: null,
        daily_bytes_limit: null,
        created_by_user_id: null,
        created_at: now,
        revoked_at: null,
      }),
    );
  }

  for (const a of admins) {
    stmts.push(
      insertMissing('users', {
        id: a.id,
        email: a.email,
        name: a.name,
        password_hash: a.pw.hash,
        password_salt: a.pw.salt,
        password_iterations: a.pw.iterations,
        failed_logins: 0,
        locked_until: null,
        created_at: now,
      }),
    );
    stmts.push(insertMissing('memberships', { user_id: a.id, org_id: a.org_id, brand_id: a.brand_id, role: 'admin', created_at: now }));
  }

  for (const r of reports) {
    stmts.push(
      insertMissing('reports', {
        id: r.id,
        type: r.type,
        org_id: r.orgId ?? null,
        brand_id: r.brandId ?? null,
        name: r.name,
        description: r.description,
        instructions: r.instructions,
        dashboard_config: json(r.dashboardConfig),
        created_at: now,
      }),
    );
    r.sections.forEach((s, i) => {
      const parameters = assertKnownSlots(s.sql);
      stmts.push(
        insertMissing('report_queries', {
          id: s.id,
          report_id: r.id,
          ordinal: i + 1,
          name: s.name,
          description: s.description,
          sql_template: s.sql,
          parameters: JSON.stringify(parameters),
          narrative_hints: s.narrativeHints ?? null,
          chart_spec: json(s.chartSpec),
        }),
      );
    });
  }

  for (const q of demoSavedQueries(now)) {
    if (templateSlots(q.sql).length > 0) throw new Error(`saved query ${q.id} must be concrete SQL (no {slot})`);
    stmts.push(
      insertMissing('saved_queries', {
        id: q.id,
        brand_id: q.brandId,
        name: q.name,
        description: q.description,
        sql: q.sql,
        tables: JSON.stringify(q.tables),
        created_at: now,
      }),
    );
  }
  stmts.push(...demoMemoryStatements(now).map((s) => inlineStatement(s, sqlLiteral)));
  return stmts;
}
