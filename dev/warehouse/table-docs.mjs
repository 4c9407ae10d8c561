// What `tables.get` says about each demo table beyond its data: column descriptions, the table's labels, and
// which column tells the days it covers. In BigQuery these are table metadata (set with DDL
// `OPTIONS(description = ...)` and `labels`), not data, so they live here and not in the generated data file:
// editing a description does not rebuild the demo datasets.

/**
 * Per table: a description of every column, and `coverage`: the table and DATE/TIMESTAMP column whose first
 * and last day become the table's `data_first_day` / `data_last_day` labels (a derived table takes its
 * source's days, so a monthly table does not claim the whole of a month that has only begun).
 * @type {Record<string, { columns: Record<string, string>, coverage?: { table: string, column: string } }>}
 */
export const TABLE_DOCS = {
  table_metadata: {
    columns: {
      table_name: 'Table name inside this dataset.',
      layer: 'raw (as loaded from the source), mart (modelled, for analysis) or meta (this catalog).',
      data_source: 'The system or table the rows come from.',
      description: 'What one row is.',
    },
  },
  fact__orders: {
    columns: {
      order_id: 'Unique order id.',
      order_date: 'Calendar day of the order (UTC), the date reports filter on.',
      order_ts: 'When the order was placed (UTC).',
      customer_id: 'dim__customers.customer_id; null for guest checkouts.',
      product_id: 'dim__products.product_id.',
      channel: 'web, store or marketplace.',
      quantity: 'Units ordered.',
      revenue: 'Order value in the brand currency after discounts, excluding tax and shipping; returns and refunds are not deducted.',
      currency: 'ISO 4217 code of revenue (one per brand).',
    },
    coverage: { table: 'fact__orders', column: 'order_date' },
  },
  dim__customers: {
    columns: {
      customer_id: 'Unique customer id.',
      signup_date: 'Day the customer account was created.',
      country: 'ISO 3166-1 alpha-2 country code.',
      segment: 'Loyalty segment (see the segment memory for how it is assigned).',
    },
  },
  dim__products: {
    columns: {
      product_id: 'Unique product id.',
      name: 'Product name.',
      category: 'Product category.',
      unit_price: 'List price per unit in the brand currency, excluding tax.',
    },
  },
  agg__daily_revenue: {
    columns: {
      day: 'Order date.',
      channel: 'web, store or marketplace.',
      orders: 'Orders that day in that channel.',
      revenue: 'Sum of fact__orders.revenue that day in that channel.',
    },
    coverage: { table: 'fact__orders', column: 'order_date' },
  },
  report__monthly_kpis: {
    columns: {
      month: 'First day of the month. The first and the current month are partial: see is_partial_month.',
      orders: 'Orders in the month.',
      revenue: 'Sum of fact__orders.revenue in the month.',
      customers: 'Distinct customers who ordered in the month.',
      aov: 'Average order value: revenue / orders.',
      is_partial_month: 'TRUE when the data does not cover the whole month (the history began after the 1st, or it is the current month).',
    },
    coverage: { table: 'fact__orders', column: 'order_date' },
  },
  raw__web_events: {
    columns: {
      event_id: 'Unique event id.',
      event_ts: 'When the event happened (UTC).',
      customer_id: 'dim__customers.customer_id; null for anonymous visitors.',
      event_name: 'page_view, search, add_to_cart, begin_checkout or purchase.',
      page: 'Path of the page.',
    },
    coverage: { table: 'raw__web_events', column: 'event_ts' },
  },
};
