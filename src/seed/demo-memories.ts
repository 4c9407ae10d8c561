import type { MemoryOwner } from '../features/memories/rules';
import { createMemoryStatements, type Statement } from '../features/memories/store';

/**
 * Demo memories: true statements about the demo warehouse (dev/warehouse/demo-data.mjs builds it; docs/demo-data.md
 * describes it). Each is checked against the data in test/memories-demo.test.ts. Seeded insert-if-missing by fixed
 * id, so a rerun never overwrites an edit or revives a deleted one.
 */
export interface DemoMemory extends MemoryOwner {
  id: string;
  table: string | null;
  title: string;
  content: string;
}

export const DEMO_MEMORIES: DemoMemory[] = [
  {
    id: 'mem_demo_orders_revenue',
    scope: 'system',
    orgId: null,
    brandId: null,
    table: 'fact__orders',
    title: 'revenue is gross sales after discounts, in the brand currency',
    content:
      '`revenue` is the line value after the order discount (quantity × list price, less 10% or 20% on discounted ' +
      'orders). It is **gross** of returns, refunds, tax and shipping: none of those are recorded in this dataset, so ' +
      'do not call it net revenue. The amount is in the currency of the `currency` column (one currency per brand); ' +
      'never add revenue across brands without converting.',
  },
  {
    id: 'mem_demo_daily_revenue_source',
    scope: 'system',
    orgId: null,
    brandId: null,
    table: 'agg__daily_revenue',
    title: 'built from fact__orders, one row per day and channel',
    content:
      '`agg__daily_revenue` is `fact__orders` grouped by `order_date` (as `day`) and `channel`: `orders` counts orders ' +
      'and `revenue` sums `revenue`, so its totals match `fact__orders` for the same days. Prefer it for daily trends: ' +
      'it scans far fewer bytes.',
  },
  {
    id: 'mem_demo_monthly_kpis_source',
    scope: 'system',
    orgId: null,
    brandId: null,
    table: 'report__monthly_kpis',
    title: 'built from fact__orders by order_date month; customers do not add up',
    content:
      '`report__monthly_kpis` is `fact__orders` grouped by calendar month of `order_date` (`month` is the first day). ' +
      '`aov` is revenue / orders. `customers` counts distinct customers within the month, so summing it over months ' +
      'counts repeat buyers more than once: count distinct `customer_id` in `fact__orders` for a multi-month figure.',
  },
  {
    id: 'mem_demo_monthly_date_column',
    scope: 'org',
    orgId: 'org_demo',
    brandId: null,
    table: null,
    title: 'monthly reports filter on order_date',
    content:
      'For a monthly report, filter and group orders on `order_date` (a DATE, the UTC calendar day), e.g. ' +
      "`order_date BETWEEN DATE '2026-10-01' AND DATE '2026-10-31'`, not on `order_ts`. That is how " +
      '`report__monthly_kpis` and the stored reports count a month, so the numbers agree.',
  },
  {
    id: 'mem_demo_acme_orders_size',
    scope: 'brand',
    orgId: null,
    brandId: 'brand_acme',
    table: 'fact__orders',
    title: 'Acme: 500,000 orders in USD; aggregate before pulling rows',
    content:
      "Acme's `fact__orders` holds about 500,000 orders over the last 400 days, in USD, the largest demo dataset. " +
      'Aggregate in SQL, or read `agg__daily_revenue` / `report__monthly_kpis`, instead of pulling raw rows.',
  },
  {
    id: 'mem_demo_umbrella_orders_currency',
    scope: 'brand',
    orgId: null,
    brandId: 'brand_umbrella',
    table: 'fact__orders',
    title: 'Umbrella: revenue is in GBP',
    content: "Umbrella Health's `revenue` is in GBP (`currency` = 'GBP' on every order); about 20,000 orders over the last 400 days.",
  },
  {
    id: 'mem_demo_umbrella_web_events',
    scope: 'brand',
    orgId: null,
    brandId: 'brand_umbrella',
    table: 'raw__web_events',
    title: 'anonymous visits have no customer_id',
    content:
      '`customer_id` is null for anonymous visitors, so `COUNT(DISTINCT customer_id)` counts signed-in customers only; ' +
      'count events (`event_id`) for traffic that includes anonymous visits.',
  },
];

/** The seed's statements for the demo memories, each with its `create` revision, inserted only if missing. */
export function demoMemoryStatements(now: number, memories: readonly DemoMemory[] = DEMO_MEMORIES): Statement[] {
  return memories.flatMap((m) =>
    createMemoryStatements(m, {
      revisionId: `mrev_${m.id.slice('mem_'.length)}`,
      actor: { kind: 'seed', id: null, name: 'demo data' },
      transport: 'seed',
      requestId: null,
      now,
    }),
  );
}
