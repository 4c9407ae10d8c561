// The SQL guard's table-driven corpus (used by test/sql-guard.test.ts). The scope is always
// { project: 'service-v1', dataset: 'acme' }.
//
// LEGIT: analytic BigQuery that must pass, with the tables it reads. A case the checker cannot accept yet stays
// here with `knownFalseReject` (the reason), so the false-reject rate reported by the test is honest.
// REFUSED_BY_DESIGN: BigQuery the API refuses on purpose, each for a reason docs/sql-guard.md gives.
// ATTACKS: input that must be refused, with the code it must be refused with (the hostile twins of each accepted
// form sit next to the other attacks of their kind).

export interface LegitCase {
  name: string;
  sql: string;
  /** Tables the guard must report, in order of first use (omit to only require acceptance). */
  tables?: string[];
  /** Set when the guard is known to reject this legitimate query; the reason is documented. */
  knownFalseReject?: string;
}

export interface AttackCase {
  name: string;
  sql: string;
  code: 'INVALID_SQL' | 'FORBIDDEN_TABLE' | 'QUERY_FAILED';
}

const T = (table: string) => `\`service-v1.acme.${table}\``;
const N = (table: string) => `service-v1.acme.${table}`;
const ORDERS = T('fact__orders');
const CUSTOMERS = T('dim__customers');
const PRODUCTS = T('dim__products');
const DAILY = T('agg__daily_revenue');
const KPIS = T('report__monthly_kpis');
const EVENTS = T('raw__web_events');

export const LEGIT: LegitCase[] = [
  // Discovery queries from the spec
  { name: 'catalog', sql: 'SELECT table_name, layer, data_source FROM service-v1.acme.table_metadata', tables: [N('table_metadata')] },
  {
    name: 'columns of a table',
    sql: "SELECT column_name, data_type FROM service-v1.acme.INFORMATION_SCHEMA.COLUMNS WHERE table_name = 'fact__orders'",
    tables: [N('INFORMATION_SCHEMA.COLUMNS')],
  },
  {
    name: 'columns, backticked',
    sql: "SELECT column_name FROM `service-v1.acme.INFORMATION_SCHEMA.COLUMNS` WHERE table_name = 'dim__customers'",
    tables: [N('INFORMATION_SCHEMA.COLUMNS')],
  },
  {
    name: 'columns, lower-case view name',
    sql: "SELECT column_name FROM `service-v1`.acme.information_schema.columns WHERE table_name = 'x'",
    tables: [N('INFORMATION_SCHEMA.COLUMNS')],
  },
  {
    name: 'columns, split quoting',
    sql: 'SELECT * FROM `service-v1.acme`.INFORMATION_SCHEMA.COLUMNS',
    tables: [N('INFORMATION_SCHEMA.COLUMNS')],
  },

  // Every quoting form BigQuery accepts
  { name: 'whole path quoted', sql: `SELECT * FROM ${ORDERS}`, tables: [N('fact__orders')] },
  { name: 'project quoted', sql: 'SELECT * FROM `service-v1`.acme.fact__orders', tables: [N('fact__orders')] },
  { name: 'each part quoted', sql: 'SELECT * FROM `service-v1`.`acme`.`fact__orders`', tables: [N('fact__orders')] },
  { name: 'project and dataset quoted together', sql: 'SELECT * FROM `service-v1.acme`.fact__orders', tables: [N('fact__orders')] },
  { name: 'dataset and table quoted together', sql: 'SELECT * FROM `service-v1`.`acme.fact__orders`', tables: [N('fact__orders')] },
  { name: 'unquoted dashed project', sql: 'SELECT * FROM service-v1.acme.fact__orders', tables: [N('fact__orders')] },
  { name: 'table quoted only', sql: 'SELECT * FROM `service-v1`.acme.`dim__products`', tables: [N('dim__products')] },
  { name: 'alias with AS', sql: `SELECT o.order_id FROM ${ORDERS} AS o`, tables: [N('fact__orders')] },
  { name: 'alias without AS', sql: `SELECT o.order_id FROM ${ORDERS} o`, tables: [N('fact__orders')] },
  {
    name: 'same table twice reported once',
    sql: `SELECT a.order_id FROM ${ORDERS} a JOIN ${ORDERS} b USING (order_id)`,
    tables: [N('fact__orders')],
  },

  // Basic analytics
  { name: 'count', sql: `SELECT COUNT(*) AS n FROM ${ORDERS}` },
  {
    name: 'revenue by channel',
    sql: `SELECT channel, SUM(revenue) AS revenue, COUNT(DISTINCT customer_id) AS customers FROM ${ORDERS} GROUP BY channel ORDER BY revenue DESC`,
  },
  { name: 'limit offset paging', sql: `SELECT * FROM ${DAILY} ORDER BY day DESC, channel LIMIT 100 OFFSET 200` },
  {
    name: 'date window',
    sql: `SELECT day, revenue FROM ${DAILY} WHERE day BETWEEN DATE_SUB(CURRENT_DATE(), INTERVAL 30 DAY) AND CURRENT_DATE()`,
  },
  {
    name: 'DATE_TRUNC months',
    sql: `SELECT DATE_TRUNC(order_date, MONTH) AS month, SUM(revenue) FROM ${ORDERS} GROUP BY 1 ORDER BY 1`,
  },
  {
    name: 'SAFE_DIVIDE average order value',
    sql: `SELECT channel, SAFE_DIVIDE(SUM(revenue), COUNT(DISTINCT order_id)) AS aov FROM ${ORDERS} GROUP BY channel`,
  },
  { name: 'HAVING', sql: `SELECT customer_id, COUNT(*) AS orders FROM ${ORDERS} GROUP BY customer_id HAVING COUNT(*) > 5` },
  { name: 'DISTINCT', sql: `SELECT DISTINCT country FROM ${CUSTOMERS}` },
  {
    name: 'CASE expression',
    sql: `SELECT CASE WHEN revenue > 100 THEN 'big' WHEN revenue > 10 THEN 'mid' ELSE 'small' END AS size, COUNT(*) FROM ${ORDERS} GROUP BY 1`,
  },
  { name: 'simple CASE', sql: `SELECT CASE channel WHEN 'web' THEN 1 WHEN 'store' THEN 2 ELSE 3 END FROM ${ORDERS}` },
  {
    name: 'IF and IFNULL',
    sql: `SELECT IF(quantity > 1, 'multi', 'single'), IFNULL(currency, 'USD'), COALESCE(channel, 'unknown') FROM ${ORDERS}`,
  },
  { name: 'NULLIF', sql: `SELECT revenue / NULLIF(quantity, 0) FROM ${ORDERS}` },
  { name: 'IN list', sql: `SELECT * FROM ${ORDERS} WHERE channel IN ('web', 'store')` },
  { name: 'NOT IN and NOT LIKE', sql: `SELECT * FROM ${CUSTOMERS} WHERE country NOT IN ('US') AND segment NOT LIKE 'test%'` },
  { name: 'IS NULL', sql: `SELECT * FROM ${CUSTOMERS} WHERE signup_date IS NULL OR country IS NOT NULL` },
  { name: 'BETWEEN numbers', sql: `SELECT * FROM ${PRODUCTS} WHERE unit_price BETWEEN 10 AND 20` },
  { name: 'arithmetic', sql: `SELECT revenue * 1.2 - 3 / quantity + MOD(quantity, 2) AS x FROM ${ORDERS}` },
  { name: 'ROUND', sql: `SELECT ROUND(SUM(revenue), 2) FROM ${ORDERS}` },
  { name: 'no FROM', sql: 'SELECT 1 AS one, CURRENT_DATE() AS today' },
  { name: 'SELECT * EXCEPT', sql: `SELECT * EXCEPT (currency) FROM ${ORDERS}` },
  { name: 'SELECT * REPLACE', sql: `SELECT * REPLACE (ROUND(revenue) AS revenue) FROM ${ORDERS}` },
  {
    name: 'qualified star',
    sql: `SELECT o.*, c.country FROM ${ORDERS} o JOIN ${CUSTOMERS} c USING (customer_id)`,
    tables: [N('fact__orders'), N('dim__customers')],
  },
  { name: 'trailing semicolon', sql: `SELECT COUNT(*) FROM ${ORDERS};`, tables: [N('fact__orders')] },
  { name: 'trailing semicolon and comment', sql: `SELECT COUNT(*) FROM ${ORDERS}; -- done`, tables: [N('fact__orders')] },
  { name: 'lower-case keywords', sql: `select channel, sum(revenue) from ${ORDERS} where quantity > 0 group by channel` },

  // Joins
  {
    name: 'inner join',
    sql: `SELECT c.country, SUM(o.revenue) FROM ${ORDERS} o JOIN ${CUSTOMERS} c ON c.customer_id = o.customer_id GROUP BY 1`,
  },
  { name: 'left join', sql: `SELECT p.category, COUNT(o.order_id) FROM ${PRODUCTS} p LEFT JOIN ${ORDERS} o USING (product_id) GROUP BY 1` },
  { name: 'full outer join', sql: `SELECT * FROM ${ORDERS} o FULL OUTER JOIN ${CUSTOMERS} c ON o.customer_id = c.customer_id` },
  { name: 'right join', sql: `SELECT * FROM ${ORDERS} o RIGHT JOIN ${PRODUCTS} p ON o.product_id = p.product_id` },
  { name: 'cross join', sql: `SELECT * FROM ${PRODUCTS} CROSS JOIN ${DAILY}`, tables: [N('dim__products'), N('agg__daily_revenue')] },
  {
    name: 'comma join',
    sql: `SELECT * FROM ${PRODUCTS} p, ${CUSTOMERS} c WHERE p.product_id IS NOT NULL`,
    tables: [N('dim__products'), N('dim__customers')],
  },
  {
    name: 'three-way join',
    sql: `SELECT p.category, c.segment, SUM(o.revenue) FROM ${ORDERS} o JOIN ${PRODUCTS} p USING (product_id) JOIN ${CUSTOMERS} c USING (customer_id) GROUP BY 1, 2`,
    tables: [N('fact__orders'), N('dim__products'), N('dim__customers')],
  },
  {
    name: 'parenthesized join',
    sql: `SELECT * FROM (${ORDERS} o JOIN ${CUSTOMERS} c USING (customer_id)) LEFT JOIN ${PRODUCTS} p USING (product_id)`,
    tables: [N('fact__orders'), N('dim__customers'), N('dim__products')],
  },
  {
    name: 'self join with inequality',
    sql: `SELECT a.day, b.day FROM ${DAILY} a JOIN ${DAILY} b ON b.day = DATE_ADD(a.day, INTERVAL 1 DAY) AND a.channel = b.channel`,
  },

  // CTEs
  {
    name: 'CTE',
    sql: `WITH monthly AS (SELECT DATE_TRUNC(order_date, MONTH) AS month, SUM(revenue) AS revenue FROM ${ORDERS} GROUP BY 1) SELECT * FROM monthly ORDER BY month`,
    tables: [N('fact__orders')],
  },
  {
    name: 'chained CTEs',
    sql: `WITH a AS (SELECT customer_id, SUM(revenue) AS r FROM ${ORDERS} GROUP BY 1), b AS (SELECT * FROM a WHERE r > 100), c AS (SELECT b.*, d.country FROM b JOIN ${CUSTOMERS} d USING (customer_id)) SELECT country, COUNT(*) FROM c GROUP BY country`,
    tables: [N('fact__orders'), N('dim__customers')],
  },
  {
    name: 'CTE referenced twice',
    sql: `WITH t AS (SELECT * FROM ${DAILY}) SELECT x.day FROM t x JOIN t y ON x.day = y.day`,
    tables: [N('agg__daily_revenue')],
  },
  {
    name: 'CTE name in different case',
    sql: `WITH Monthly AS (SELECT 1 AS x FROM ${KPIS}) SELECT * FROM MONTHLY`,
    tables: [N('report__monthly_kpis')],
  },
  {
    name: 'nested WITH in subquery',
    sql: `SELECT * FROM (WITH inner_cte AS (SELECT * FROM ${EVENTS}) SELECT event_name, COUNT(*) AS n FROM inner_cte GROUP BY 1)`,
    tables: [N('raw__web_events')],
  },
  {
    name: 'recursive CTE',
    sql: 'WITH RECURSIVE days AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM days WHERE n < 30) SELECT * FROM days',
    tables: [],
  },
  {
    name: 'CTE shadowing a name used elsewhere',
    sql: `WITH orders AS (SELECT * FROM ${ORDERS}) SELECT (SELECT COUNT(*) FROM orders) AS n, (WITH orders AS (SELECT 1 AS x) SELECT COUNT(*) FROM orders) AS m`,
    tables: [N('fact__orders')],
  },

  // Subqueries in every clause
  { name: 'scalar subquery in SELECT', sql: `SELECT day, revenue / (SELECT SUM(revenue) FROM ${DAILY}) AS share FROM ${DAILY}` },
  {
    name: 'IN subquery',
    sql: `SELECT * FROM ${ORDERS} WHERE customer_id IN (SELECT customer_id FROM ${CUSTOMERS} WHERE country = 'DE')`,
    tables: [N('fact__orders'), N('dim__customers')],
  },
  { name: 'NOT IN subquery', sql: `SELECT * FROM ${PRODUCTS} WHERE product_id NOT IN (SELECT product_id FROM ${ORDERS})` },
  {
    name: 'EXISTS',
    sql: `SELECT * FROM ${CUSTOMERS} c WHERE EXISTS (SELECT 1 FROM ${ORDERS} o WHERE o.customer_id = c.customer_id)`,
    tables: [N('dim__customers'), N('fact__orders')],
  },
  {
    name: 'NOT EXISTS',
    sql: `SELECT * FROM ${CUSTOMERS} c WHERE NOT EXISTS (SELECT 1 FROM ${ORDERS} o WHERE o.customer_id = c.customer_id)`,
  },
  {
    name: 'derived table',
    sql: `SELECT channel, AVG(r) FROM (SELECT channel, SUM(revenue) AS r FROM ${ORDERS} GROUP BY channel, order_date) GROUP BY channel`,
  },
  {
    name: 'subquery in HAVING',
    sql: `SELECT channel, SUM(revenue) FROM ${ORDERS} GROUP BY channel HAVING SUM(revenue) > (SELECT AVG(revenue) FROM ${DAILY})`,
  },
  {
    name: 'subquery in JOIN ON',
    sql: `SELECT * FROM ${ORDERS} o JOIN ${CUSTOMERS} c ON c.customer_id = o.customer_id AND c.country IN (SELECT DISTINCT country FROM ${CUSTOMERS})`,
  },
  {
    name: 'correlated subquery',
    sql: `SELECT p.product_id, (SELECT MAX(o.order_date) FROM ${ORDERS} o WHERE o.product_id = p.product_id) AS last_order FROM ${PRODUCTS} p`,
  },
  {
    name: 'ARRAY subquery',
    sql: `SELECT c.customer_id, ARRAY(SELECT o.order_id FROM ${ORDERS} o WHERE o.customer_id = c.customer_id LIMIT 3) AS orders FROM ${CUSTOMERS} c`,
  },
  {
    name: 'subquery in ORDER BY',
    sql: `SELECT * FROM ${PRODUCTS} p ORDER BY (SELECT COUNT(*) FROM ${ORDERS} o WHERE o.product_id = p.product_id) DESC`,
  },
  {
    name: 'deeply nested subqueries',
    sql: `SELECT * FROM (SELECT * FROM (SELECT * FROM (SELECT * FROM (SELECT order_id FROM ${ORDERS}))))`,
    tables: [N('fact__orders')],
  },
  { name: 'IN UNNEST', sql: `SELECT * FROM ${ORDERS} WHERE channel IN UNNEST(['web', 'store'])` },

  // Set operations
  {
    name: 'UNION ALL',
    sql: `SELECT customer_id FROM ${ORDERS} UNION ALL SELECT customer_id FROM ${CUSTOMERS}`,
    tables: [N('fact__orders'), N('dim__customers')],
  },
  { name: 'UNION DISTINCT', sql: `SELECT channel FROM ${ORDERS} UNION DISTINCT SELECT channel FROM ${DAILY}` },
  { name: 'EXCEPT DISTINCT', sql: `SELECT customer_id FROM ${CUSTOMERS} EXCEPT DISTINCT SELECT customer_id FROM ${ORDERS}` },
  { name: 'INTERSECT DISTINCT', sql: `SELECT product_id FROM ${PRODUCTS} INTERSECT DISTINCT SELECT product_id FROM ${ORDERS}` },
  {
    name: 'parenthesized set operation with ORDER BY',
    sql: `(SELECT day FROM ${DAILY} LIMIT 5) UNION ALL (SELECT month FROM ${KPIS} LIMIT 5) ORDER BY 1`,
  },

  // Window functions and QUALIFY
  {
    name: 'ROW_NUMBER window',
    sql: `SELECT order_id, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY order_ts DESC) AS rn FROM ${ORDERS}`,
  },
  {
    name: 'QUALIFY latest order',
    sql: `SELECT * FROM ${ORDERS} WHERE TRUE QUALIFY ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY order_ts DESC) = 1`,
  },
  {
    name: 'running total with frame',
    sql: `SELECT day, SUM(revenue) OVER (ORDER BY day ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running FROM ${DAILY}`,
  },
  {
    name: 'moving average',
    sql: `SELECT day, AVG(revenue) OVER (PARTITION BY channel ORDER BY day ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) FROM ${DAILY}`,
  },
  {
    name: 'named window',
    sql: `SELECT day, LAG(revenue) OVER w AS prev, LEAD(revenue) OVER w AS next FROM ${DAILY} WINDOW w AS (PARTITION BY channel ORDER BY day)`,
  },
  {
    name: 'RANK, DENSE_RANK, NTILE',
    sql: `SELECT RANK() OVER (ORDER BY revenue), DENSE_RANK() OVER (ORDER BY revenue), NTILE(4) OVER (ORDER BY revenue) FROM ${KPIS}`,
  },
  { name: 'PERCENTILE_CONT', sql: `SELECT PERCENTILE_CONT(revenue, 0.5) OVER () AS median FROM ${ORDERS} LIMIT 1` },
  {
    name: 'FIRST_VALUE with RANGE frame',
    sql: `SELECT FIRST_VALUE(revenue) OVER (ORDER BY UNIX_DATE(day) RANGE BETWEEN 7 PRECEDING AND CURRENT ROW) FROM ${DAILY}`,
  },
  {
    name: 'window on aggregate',
    sql: `SELECT channel, SUM(revenue) AS r, SUM(SUM(revenue)) OVER () AS total FROM ${ORDERS} GROUP BY channel`,
  },

  // Arrays, structs, UNNEST
  { name: 'UNNEST literal array', sql: 'SELECT x FROM UNNEST([1, 2, 3]) AS x', tables: [] },
  { name: 'UNNEST with offset', sql: "SELECT x, off FROM UNNEST(['a', 'b']) AS x WITH OFFSET AS off", tables: [] },
  {
    name: 'CROSS JOIN UNNEST',
    sql: `SELECT o.order_id, tag FROM ${ORDERS} o CROSS JOIN UNNEST(SPLIT(o.channel, '-')) AS tag`,
    tables: [N('fact__orders')],
  },
  { name: 'comma UNNEST of a column path', sql: `SELECT o.order_id, part FROM ${ORDERS} o, UNNEST(SPLIT(o.currency)) AS part` },
  { name: 'UNNEST of generated dates', sql: "SELECT d FROM UNNEST(GENERATE_DATE_ARRAY('2024-01-01', '2024-01-31', INTERVAL 1 DAY)) AS d" },
  {
    name: 'UNNEST of an ARRAY subquery',
    sql: `SELECT * FROM UNNEST(ARRAY(SELECT product_id FROM ${PRODUCTS})) AS pid`,
    tables: [N('dim__products')],
  },
  {
    name: 'ARRAY_AGG with ORDER BY and LIMIT',
    sql: `SELECT customer_id, ARRAY_AGG(order_id ORDER BY order_ts DESC LIMIT 5) FROM ${ORDERS} GROUP BY 1`,
  },
  { name: 'ARRAY_AGG IGNORE NULLS', sql: `SELECT ARRAY_AGG(DISTINCT channel IGNORE NULLS) FROM ${ORDERS}` },
  { name: 'STRUCT constructor', sql: `SELECT STRUCT(order_id AS id, revenue AS amount) AS o FROM ${ORDERS}` },
  { name: 'typed STRUCT', sql: "SELECT STRUCT<id STRING, amount FLOAT64>('a', 1.5) AS s" },
  { name: 'ARRAY of STRUCT', sql: `SELECT ARRAY_AGG(STRUCT(day, revenue)) AS series FROM ${DAILY}` },
  { name: 'array subscript', sql: `SELECT ARRAY_AGG(order_id)[SAFE_OFFSET(0)] AS first FROM ${ORDERS}` },
  { name: 'APPROX_QUANTILES offset', sql: `SELECT APPROX_QUANTILES(revenue, 100)[OFFSET(50)] AS p50 FROM ${ORDERS}` },
  { name: 'struct field access', sql: `SELECT s.id FROM (SELECT STRUCT(order_id AS id) AS s FROM ${ORDERS})` },
  { name: 'SELECT AS STRUCT subquery', sql: `SELECT ARRAY(SELECT AS STRUCT day, revenue FROM ${DAILY} LIMIT 3) AS rows` },
  { name: 'ARRAY_LENGTH and ARRAY_CONCAT', sql: 'SELECT ARRAY_LENGTH(ARRAY_CONCAT([1], [2, 3])) AS n' },
  { name: 'typed ARRAY literal', sql: 'SELECT ARRAY<INT64>[1, 2, 3] AS xs' },

  // PIVOT / UNPIVOT / TABLESAMPLE
  {
    name: 'PIVOT',
    sql: `SELECT * FROM (SELECT channel, EXTRACT(YEAR FROM order_date) AS y, revenue FROM ${ORDERS}) PIVOT (SUM(revenue) FOR channel IN ('web', 'store', 'marketplace'))`,
    tables: [N('fact__orders')],
  },
  {
    name: 'PIVOT on a table',
    sql: `SELECT * FROM ${DAILY} PIVOT (SUM(revenue) AS r FOR channel IN ('web' AS w, 'store' AS s))`,
    tables: [N('agg__daily_revenue')],
  },
  {
    name: 'UNPIVOT',
    sql: `SELECT * FROM ${KPIS} UNPIVOT (value FOR metric IN (orders, revenue, customers))`,
    tables: [N('report__monthly_kpis')],
  },
  { name: 'TABLESAMPLE', sql: `SELECT * FROM ${EVENTS} TABLESAMPLE SYSTEM (10 PERCENT)`, tables: [N('raw__web_events')] },

  // Functions: dates, strings, JSON, casts
  { name: 'FORMAT_DATE and EXTRACT', sql: `SELECT FORMAT_DATE('%Y-%m', order_date), EXTRACT(DAYOFWEEK FROM order_date) FROM ${ORDERS}` },
  { name: 'DATE_DIFF and LAST_DAY', sql: `SELECT DATE_DIFF(CURRENT_DATE(), signup_date, DAY), LAST_DAY(signup_date) FROM ${CUSTOMERS}` },
  { name: 'TIMESTAMP_TRUNC', sql: `SELECT TIMESTAMP_TRUNC(event_ts, HOUR) AS hour, COUNT(*) FROM ${EVENTS} GROUP BY 1` },
  {
    name: 'timestamp arithmetic with INTERVAL',
    sql: `SELECT * FROM ${EVENTS} WHERE event_ts > TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 1 HOUR)`,
  },
  { name: 'DATE literal', sql: `SELECT * FROM ${ORDERS} WHERE order_date >= DATE '2024-01-01'` },
  { name: 'TIMESTAMP literal', sql: `SELECT * FROM ${EVENTS} WHERE event_ts < TIMESTAMP '2024-01-01 00:00:00+00'` },
  {
    name: 'CAST and SAFE_CAST',
    sql: `SELECT CAST(quantity AS STRING), SAFE_CAST(order_id AS INT64), CAST(revenue AS NUMERIC) FROM ${ORDERS}`,
  },
  { name: 'nested CASTs', sql: `SELECT CAST(SUBSTR(CAST(order_date AS STRING), 1, 4) AS INT64) AS year FROM ${ORDERS}` },
  {
    name: 'string functions',
    sql: `SELECT LOWER(name), UPPER(category), CONCAT(name, ' - ', category), LENGTH(name), TRIM(name), REPLACE(name, 'a', 'b') FROM ${PRODUCTS}`,
  },
  { name: 'REGEXP functions', sql: `SELECT REGEXP_EXTRACT(page, r'/p/(\\d+)'), REGEXP_CONTAINS(page, r'^/checkout') FROM ${EVENTS}` },
  { name: 'STRING_AGG', sql: `SELECT STRING_AGG(DISTINCT category, ', ' ORDER BY category) FROM ${PRODUCTS}` },
  { name: 'JSON functions', sql: `SELECT JSON_VALUE('{"a": 1}', '$.a'), TO_JSON_STRING(STRUCT(1 AS a))` },
  { name: 'COUNTIF and LOGICAL_OR', sql: `SELECT COUNTIF(channel = 'web'), LOGICAL_OR(quantity > 10) FROM ${ORDERS}` },
  { name: 'APPROX_COUNT_DISTINCT', sql: `SELECT APPROX_COUNT_DISTINCT(customer_id) FROM ${ORDERS}` },
  { name: 'GROUP BY ROLLUP', sql: `SELECT channel, currency, SUM(revenue) FROM ${ORDERS} GROUP BY ROLLUP (channel, currency)` },
  { name: 'SAFE. prefix', sql: `SELECT SAFE.PARSE_DATE('%Y%m%d', '20240101'), SAFE.LOG(revenue, 10) FROM ${ORDERS}` },
  { name: 'NET and HLL_COUNT namespaces', sql: `SELECT NET.HOST(page), HLL_COUNT.EXTRACT(HLL_COUNT.INIT(customer_id)) FROM ${EVENTS}` },
  {
    name: 'routine of the dataset',
    sql: `SELECT \`service-v1.acme.normalize_channel\`(channel) FROM ${ORDERS}`,
    tables: [N('fact__orders')],
  },
  { name: 'GENERATE_ARRAY', sql: 'SELECT GENERATE_ARRAY(1, 10, 2) AS xs' },
  { name: 'IS DISTINCT FROM', sql: `SELECT * FROM ${ORDERS} WHERE channel IS DISTINCT FROM 'web'` },
  { name: 'NOT with BETWEEN', sql: `SELECT * FROM ${ORDERS} WHERE NOT quantity BETWEEN 1 AND 3 AND NOT (revenue > 10 OR revenue < 1)` },

  // Comments and strings holding SQL-looking text
  { name: 'line comment', sql: `-- monthly revenue\nSELECT SUM(revenue) FROM ${ORDERS} -- all channels`, tables: [N('fact__orders')] },
  { name: 'hash comment', sql: `# monthly revenue\nSELECT SUM(revenue) FROM ${ORDERS}`, tables: [N('fact__orders')] },
  { name: 'block comment', sql: `SELECT /* the total */ SUM(revenue) FROM ${ORDERS} /* multi\nline */`, tables: [N('fact__orders')] },
  {
    name: 'comment naming another table',
    sql: `SELECT 1 FROM ${ORDERS} -- FROM \`service-v1.globex.fact__orders\``,
    tables: [N('fact__orders')],
  },
  { name: 'comment with a semicolon and DROP', sql: `SELECT 1 FROM ${ORDERS} /* ; DROP TABLE x; */`, tables: [N('fact__orders')] },
  { name: 'string with semicolon', sql: `SELECT * FROM ${ORDERS} WHERE channel = 'web; DROP TABLE x'`, tables: [N('fact__orders')] },
  {
    name: 'string with keywords and a table name',
    sql: `SELECT 'SELECT * FROM \`service-v1.globex.t\`' AS text FROM ${ORDERS}`,
    tables: [N('fact__orders')],
  },
  {
    name: 'string with comment markers',
    sql: `SELECT '-- not a comment', "/* nor this */", '# nor this' FROM ${ORDERS}`,
    tables: [N('fact__orders')],
  },
  { name: 'escaped quotes in strings', sql: `SELECT 'it\\'s', "say \\"hi\\"", 'back\\\\slash' FROM ${ORDERS}` },
  { name: 'triple-quoted string', sql: `SELECT '''multi\nline; DELETE''' AS t, """double""" FROM ${ORDERS}` },
  { name: 'raw and bytes literals', sql: "SELECT r'\\d+', b'bytes', rb'\\x00', R\"raw\"" },
  { name: 'unicode in strings and comments', sql: `SELECT 'café ☕' AS s FROM ${ORDERS} -- naïve`, tables: [N('fact__orders')] },
  { name: 'unicode column alias in backticks', sql: `SELECT revenue AS \`umsatz €\` FROM ${ORDERS}` },
  { name: 'CRLF line endings', sql: `SELECT channel,\r\n  SUM(revenue)\r\nFROM ${ORDERS}\r\nGROUP BY channel -- end\r\n` },

  // Own-dataset features decided in docs/sql-guard.md
  {
    name: 'wildcard table of the dataset',
    sql: "SELECT COUNT(*) FROM `service-v1.acme.fact__*` WHERE _TABLE_SUFFIX = 'orders'",
    tables: [N('fact__*')],
  },
  {
    name: 'FOR SYSTEM_TIME AS OF on an own table',
    sql: `SELECT COUNT(*) FROM ${ORDERS} FOR SYSTEM_TIME AS OF TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 1 HOUR)`,
    tables: [N('fact__orders')],
  },

  // A long realistic report query
  {
    name: 'report query',
    sql: `WITH orders AS (
  SELECT o.*, c.country, c.segment, p.category
  FROM ${ORDERS} AS o
  JOIN ${CUSTOMERS} AS c USING (customer_id)
  LEFT JOIN ${PRODUCTS} AS p USING (product_id)
  WHERE o.order_date BETWEEN DATE '2024-01-01' AND DATE '2024-01-31'
),
by_segment AS (
  SELECT segment, category, COUNT(DISTINCT order_id) AS orders, ROUND(SUM(revenue), 2) AS revenue,
         SAFE_DIVIDE(SUM(revenue), COUNT(DISTINCT order_id)) AS aov
  FROM orders
  GROUP BY segment, category
)
SELECT *, RANK() OVER (PARTITION BY segment ORDER BY revenue DESC) AS rank_in_segment
FROM by_segment
QUALIFY rank_in_segment <= 3
ORDER BY segment, rank_in_segment`,
    tables: [N('fact__orders'), N('dim__customers'), N('dim__products')],
  },

  // Correlated array paths: a FROM path whose first name is a range variable in scope is an array of that row
  {
    name: 'implicit UNNEST of an alias path',
    sql: `SELECT o.order_id, item.sku FROM ${ORDERS} AS o, o.items AS item`,
    tables: [N('fact__orders')],
  },
  { name: 'alias path without AS', sql: `SELECT o.order_id, item.sku FROM ${ORDERS} o, o.items item`, tables: [N('fact__orders')] },
  {
    name: 'alias path without its own alias',
    sql: `SELECT o.order_id, items.sku FROM ${ORDERS} AS o, o.items`,
    tables: [N('fact__orders')],
  },
  {
    name: 'alias path in CROSS JOIN',
    sql: `SELECT o.order_id, i.sku FROM ${ORDERS} AS o CROSS JOIN o.items AS i`,
    tables: [N('fact__orders')],
  },
  {
    name: 'alias path in LEFT JOIN',
    sql: `SELECT o.order_id, i.sku FROM ${ORDERS} AS o LEFT JOIN o.items AS i`,
    tables: [N('fact__orders')],
  },
  {
    name: 'alias path in JOIN ... ON',
    sql: `SELECT o.order_id, i.sku FROM ${ORDERS} AS o JOIN o.items AS i ON i.quantity > 1`,
    tables: [N('fact__orders')],
  },
  {
    name: 'alias paths several levels deep',
    sql: `SELECT o.order_id, i.sku, d.code FROM ${ORDERS} AS o, o.items AS i, i.discounts AS d WHERE d.amount > 0`,
    tables: [N('fact__orders')],
  },
  {
    name: 'alias path through a struct',
    sql: `SELECT p.tracking_id FROM ${ORDERS} AS o, o.shipping.parcels AS p`,
    tables: [N('fact__orders')],
  },
  {
    name: 'alias path mixed with explicit UNNEST',
    sql: `SELECT o.order_id, i.sku, d.code FROM ${ORDERS} AS o, UNNEST(o.items) AS i, i.discounts AS d`,
    tables: [N('fact__orders')],
  },
  {
    name: 'alias path after joins of two tables',
    sql: `SELECT c.country, i.sku FROM ${ORDERS} AS o JOIN ${CUSTOMERS} AS c USING (customer_id), o.items AS i`,
    tables: [N('fact__orders'), N('dim__customers')],
  },
  {
    name: 'alias path after a parenthesized join',
    sql: `SELECT c.country, i.sku FROM (${ORDERS} AS o JOIN ${CUSTOMERS} AS c USING (customer_id)), o.items AS i`,
    tables: [N('fact__orders'), N('dim__customers')],
  },
  {
    name: 'implicit alias of an unquoted table path',
    sql: 'SELECT i.sku FROM service-v1.acme.fact__orders, fact__orders.items AS i',
    tables: [N('fact__orders')],
  },
  {
    name: 'alias path in a correlated scalar subquery',
    sql: `SELECT o.order_id, (SELECT SUM(i.quantity) FROM o.items AS i) AS units FROM ${ORDERS} AS o`,
    tables: [N('fact__orders')],
  },
  {
    name: 'alias path in EXISTS',
    sql: `SELECT o.order_id FROM ${ORDERS} AS o WHERE EXISTS (SELECT 1 FROM o.items AS i WHERE i.sku = 'A-1')`,
    tables: [N('fact__orders')],
  },
  {
    name: 'alias path in an ARRAY subquery',
    sql: `SELECT o.order_id, ARRAY(SELECT AS STRUCT i.sku, i.quantity FROM o.items AS i ORDER BY i.quantity DESC LIMIT 3) AS top FROM ${ORDERS} AS o`,
    tables: [N('fact__orders')],
  },
  {
    name: 'alias path inside a CTE',
    sql: `WITH lines AS (SELECT o.order_id, i.sku FROM ${ORDERS} AS o, o.items AS i) SELECT sku, COUNT(*) FROM lines GROUP BY sku`,
    tables: [N('fact__orders')],
  },
  {
    name: 'alias path of a CTE',
    sql: `WITH x AS (SELECT order_id, items FROM ${ORDERS}) SELECT x.order_id, i.sku FROM x, x.items AS i`,
    tables: [N('fact__orders')],
  },
  {
    name: 'alias path of a derived table',
    sql: `SELECT d.order_id, i.sku FROM (SELECT order_id, items FROM ${ORDERS}) AS d, d.items AS i`,
    tables: [N('fact__orders')],
  },
  { name: 'alias path of an UNNEST alias', sql: 'SELECT x FROM UNNEST([STRUCT([1, 2] AS xs)]) AS s, s.xs AS x', tables: [] },

  // Pipe syntax: every table in every step held to the same rules
  {
    name: 'pipe syntax',
    sql: `FROM ${ORDERS} |> WHERE quantity > 1 |> AGGREGATE SUM(revenue) GROUP BY channel`,
    tables: [N('fact__orders')],
  },
  {
    name: 'pipe syntax, multi-line with ORDER BY and LIMIT',
    sql: `FROM ${ORDERS}\n|> WHERE order_date >= DATE '2024-01-01'\n|> AGGREGATE SUM(revenue) AS revenue, COUNT(*) AS orders GROUP BY channel\n|> ORDER BY revenue DESC\n|> LIMIT 10`,
    tables: [N('fact__orders')],
  },
  {
    name: 'pipe syntax after a SELECT',
    sql: `SELECT channel, revenue FROM ${ORDERS} |> WHERE revenue > 10 |> SELECT channel`,
    tables: [N('fact__orders')],
  },
  {
    name: 'pipe EXTEND, SET, DROP, RENAME, AS',
    sql: `FROM ${ORDERS} |> EXTEND revenue * 2 AS double |> SET quantity = quantity + 1 |> DROP currency |> RENAME channel AS ch |> AS t |> SELECT t.ch, t.double`,
    tables: [N('fact__orders')],
  },
  {
    name: 'pipe JOIN of an own table',
    sql: `FROM ${ORDERS} AS o |> JOIN ${CUSTOMERS} AS c ON c.customer_id = o.customer_id |> AGGREGATE COUNT(*) GROUP BY c.country`,
    tables: [N('fact__orders'), N('dim__customers')],
  },
  {
    name: 'pipe LEFT JOIN USING',
    sql: `FROM ${ORDERS} |> LEFT JOIN ${PRODUCTS} USING (product_id)`,
    tables: [N('fact__orders'), N('dim__products')],
  },
  {
    name: 'pipe UNION ALL',
    sql: `FROM ${ORDERS} |> SELECT customer_id |> UNION ALL (SELECT customer_id FROM ${CUSTOMERS})`,
    tables: [N('fact__orders'), N('dim__customers')],
  },
  {
    name: 'pipe INTERSECT and EXCEPT',
    sql: `FROM ${PRODUCTS} |> SELECT product_id |> INTERSECT DISTINCT (SELECT product_id FROM ${ORDERS}) |> EXCEPT DISTINCT (SELECT 1)`,
  },
  {
    name: 'pipe WHERE with a subquery',
    sql: `FROM ${ORDERS} |> WHERE customer_id IN (SELECT customer_id FROM ${CUSTOMERS} WHERE country = 'DE')`,
    tables: [N('fact__orders'), N('dim__customers')],
  },
  {
    name: 'pipe in a subquery',
    sql: `SELECT * FROM (FROM ${ORDERS} |> WHERE quantity > 1 |> SELECT order_id) AS big`,
    tables: [N('fact__orders')],
  },
  {
    name: 'pipe in an IN subquery',
    sql: `SELECT * FROM ${CUSTOMERS} WHERE customer_id IN (FROM ${ORDERS} |> SELECT customer_id)`,
    tables: [N('dim__customers'), N('fact__orders')],
  },
  {
    name: 'pipe after a WITH',
    sql: `WITH recent AS (SELECT * FROM ${ORDERS} WHERE order_date > DATE '2024-01-01') FROM recent |> AGGREGATE COUNT(*) GROUP BY channel`,
    tables: [N('fact__orders')],
  },
  {
    name: 'pipe in a CTE',
    sql: `WITH t AS (FROM ${DAILY} |> WHERE revenue > 0) SELECT COUNT(*) FROM t`,
    tables: [N('agg__daily_revenue')],
  },
  {
    name: 'pipe PIVOT',
    sql: `FROM ${DAILY} |> SELECT day, channel, revenue |> PIVOT (SUM(revenue) FOR channel IN ('web', 'store'))`,
    tables: [N('agg__daily_revenue')],
  },
  { name: 'pipe UNPIVOT', sql: `FROM ${KPIS} |> UNPIVOT (value FOR metric IN (orders, revenue))`, tables: [N('report__monthly_kpis')] },
  { name: 'pipe TABLESAMPLE', sql: `FROM ${EVENTS} |> TABLESAMPLE SYSTEM (10 PERCENT) |> LIMIT 100`, tables: [N('raw__web_events')] },
  { name: 'FROM alone (a pipe query of no steps)', sql: `FROM ${DAILY}`, tables: [N('agg__daily_revenue')] },

  // Literals
  { name: 'keyword glued to a literal', sql: `SELECT * FROM ${ORDERS} WHERE order_date > DATE'2024-01-01'`, tables: [N('fact__orders')] },
  {
    name: 'typed literals glued to their strings',
    sql: `SELECT TIMESTAMP'2024-01-01 00:00:00+00', JSON'{"a": 1}', NUMERIC"1.50" FROM ${ORDERS}`,
  },
  {
    name: 'GROUP BY ALL',
    sql: `SELECT channel, SUM(revenue) FROM ${ORDERS} GROUP BY ALL`,
  },
  {
    name: 'RANGE type literal',
    sql: "SELECT RANGE<DATE> '[2024-01-01, 2024-02-01)' AS r",
  },
  // WEEK as a date part: everyday GoogleSQL (weekly cohorts and windows).
  {
    name: 'the last 12 weeks (INTERVAL n WEEK)',
    sql: `SELECT COUNT(*) AS n FROM ${ORDERS} WHERE order_date >= DATE_SUB(CURRENT_DATE(), INTERVAL 12 WEEK)`,
    tables: [N('fact__orders')],
  },
  {
    name: 'EXTRACT(WEEK FROM d)',
    sql: `SELECT EXTRACT(WEEK FROM order_date) AS wk, COUNT(*) AS n FROM ${ORDERS} GROUP BY wk`,
    tables: [N('fact__orders')],
  },
  {
    name: 'EXTRACT(WEEK(MONDAY) FROM d)',
    sql: `SELECT EXTRACT(WEEK(MONDAY) FROM order_date) AS wk, SUM(revenue) AS revenue FROM ${ORDERS} GROUP BY wk`,
    tables: [N('fact__orders')],
  },
  {
    name: 'a weekly date spine (GENERATE_DATE_ARRAY ... INTERVAL 1 WEEK)',
    sql: `SELECT week FROM UNNEST(GENERATE_DATE_ARRAY(DATE '2024-01-01', DATE '2024-03-31', INTERVAL 1 WEEK)) AS week`,
    tables: [],
  },
  {
    name: 'DATE_ADD(d, INTERVAL 2 WEEK)',
    sql: `SELECT DATE_ADD(order_date, INTERVAL 2 WEEK) AS due FROM ${ORDERS}`,
    tables: [N('fact__orders')],
  },
  // GoogleSQL analysts (and the assistants writing for them) write: round 4 of the guard (issue 35).
  {
    name: 'an emoji line comment before the query',
    sql: `-- 📈 Revenue by channel\nSELECT channel, SUM(revenue) AS revenue FROM ${ORDERS} GROUP BY channel`,
    tables: [N('fact__orders')],
  },
  {
    name: 'an emoji block comment before the FROM',
    sql: `SELECT product_id, SUM(quantity) AS units /* 🚀 top sellers */ FROM ${ORDERS} GROUP BY product_id`,
    tables: [N('fact__orders')],
  },
  {
    name: 'emoji and math letters in comments between tables',
    sql: `SELECT o.order_id /* 🧮 𝑛 orders */ FROM ${ORDERS} AS o -- 👥 who bought\nJOIN ${CUSTOMERS} AS c /* 🔗 */ USING (customer_id)`,
    tables: [N('fact__orders'), N('dim__customers')],
  },
  {
    name: 'emoji comments around unquoted dashed paths',
    sql: 'SELECT 1 /* 🚀🚀 */ FROM service-v1.acme.fact__orders AS o # 📦\nJOIN service-v1.acme.dim__products AS p USING (product_id)',
    tables: [N('fact__orders'), N('dim__products')],
  },
  {
    name: 'a typed array literal of structs (nested >> closers)',
    sql: "SELECT t.channel, t.target FROM UNNEST(ARRAY<STRUCT<channel STRING, target FLOAT64>>[('web', 1.5), ('store', 2.0)]) AS t",
    tables: [],
  },
  {
    name: 'typed array literal of structs joined to a table',
    sql: `WITH targets AS (SELECT * FROM UNNEST(ARRAY<STRUCT<channel STRING, target FLOAT64>>[('web', 1000.0)]))\nSELECT o.channel, SUM(o.revenue) / ANY_VALUE(t.target) AS attainment FROM ${ORDERS} AS o JOIN targets AS t USING (channel) GROUP BY o.channel`,
    tables: [N('fact__orders')],
  },
  {
    name: 'typed array literal three types deep, empty',
    sql: 'SELECT ARRAY<STRUCT<a ARRAY<STRUCT<b INT64, c STRING(10)>>>>[] AS nothing',
    tables: [],
  },
  {
    name: 'time travel after an alias',
    sql: `SELECT c.segment, COUNT(*) AS n FROM ${CUSTOMERS} AS c FOR SYSTEM_TIME AS OF TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 1 DAY) GROUP BY c.segment`,
    tables: [N('dim__customers')],
  },
  {
    name: 'time travel after an alias without AS, then a join',
    sql: `SELECT c.customer_id FROM ${CUSTOMERS} c FOR SYSTEM_TIME AS OF TIMESTAMP '2024-06-01 00:00:00+00'\nJOIN ${ORDERS} AS o ON o.customer_id = c.customer_id`,
    tables: [N('dim__customers'), N('fact__orders')],
  },
  {
    name: 'time travel after a quoted alias, in a CTE, then an array path of that alias',
    sql: `WITH before AS (SELECT o.order_id, i.sku FROM ${ORDERS} AS \`o\` FOR SYSTEM_TIME AS OF CURRENT_TIMESTAMP() - INTERVAL 2 HOUR, o.items AS i)\nSELECT * FROM before`,
    tables: [N('fact__orders')],
  },
  {
    name: 'time travel after an alias at the end of the query, then a comment',
    sql: `SELECT COUNT(*) FROM service-v1.acme.fact__orders AS o FOR SYSTEM_TIME AS OF TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 1 HOUR) -- an hour ago`,
    tables: [N('fact__orders')],
  },
  {
    name: 'raw bytes literals (rb and br, any case)',
    sql: `SELECT REGEXP_CONTAINS(CAST(channel AS BYTES), rb'^\\w+$') AS a, BR'x', Rb'''multi\nline''' FROM ${ORDERS} WHERE CAST(channel AS BYTES) != br"\\d"`,
    tables: [N('fact__orders')],
  },
];

/**
 * BigQuery the API refuses on purpose (docs/sql-guard.md says why for each): not a false reject, not an attack.
 * Kept here so the refusal and its code are tested.
 */
export const REFUSED_BY_DESIGN: AttackCase[] = [
  // The API has no way to send parameter values: BigQuery would refuse the query too.
  { name: 'query parameter', sql: `SELECT * FROM ${ORDERS} WHERE channel = @channel`, code: 'QUERY_FAILED' },
  // The parser does not read MODEL arguments and BigQuery's dry run does not list models, so nothing could check
  // that the model is the brand's; remote models also call services outside BigQuery.
  {
    name: 'ML.PREDICT on a model of the dataset',
    sql: `SELECT * FROM ML.PREDICT(MODEL \`service-v1.acme.churn\`, (SELECT * FROM ${CUSTOMERS}))`,
    code: 'QUERY_FAILED',
  },
  { name: 'ML.PREDICT as a scalar call', sql: 'SELECT ML.PREDICT(1)', code: 'FORBIDDEN_TABLE' },
];

export const ATTACKS: AttackCase[] = [
  // Not a single read-only statement
  { name: 'two statements', sql: `SELECT 1 FROM ${ORDERS}; SELECT 2 FROM ${ORDERS}`, code: 'INVALID_SQL' },
  { name: 'SELECT then DROP', sql: `SELECT 1; DROP TABLE ${ORDERS}`, code: 'INVALID_SQL' },
  {
    name: 'statement after a comment-only line',
    sql: 'SELECT 1;\n-- next\nDELETE FROM `service-v1.acme.fact__orders` WHERE TRUE',
    code: 'INVALID_SQL',
  },
  { name: 'INSERT', sql: `INSERT INTO ${ORDERS} (order_id) VALUES ('x')`, code: 'INVALID_SQL' },
  { name: 'UPDATE', sql: `UPDATE ${ORDERS} SET revenue = 0 WHERE TRUE`, code: 'INVALID_SQL' },
  { name: 'DELETE', sql: `DELETE FROM ${ORDERS} WHERE TRUE`, code: 'INVALID_SQL' },
  { name: 'MERGE', sql: `MERGE ${ORDERS} t USING ${ORDERS} s ON t.order_id = s.order_id WHEN MATCHED THEN DELETE`, code: 'INVALID_SQL' },
  { name: 'TRUNCATE', sql: `TRUNCATE TABLE ${ORDERS}`, code: 'INVALID_SQL' },
  { name: 'CREATE TABLE AS SELECT', sql: `CREATE TABLE \`service-v1.acme.copy\` AS SELECT * FROM ${ORDERS}`, code: 'INVALID_SQL' },
  { name: 'CREATE OR REPLACE VIEW', sql: `CREATE OR REPLACE VIEW \`service-v1.acme.v\` AS SELECT 1`, code: 'INVALID_SQL' },
  { name: 'DROP TABLE', sql: `DROP TABLE ${ORDERS}`, code: 'INVALID_SQL' },
  { name: 'ALTER TABLE', sql: `ALTER TABLE ${ORDERS} ADD COLUMN x INT64`, code: 'INVALID_SQL' },
  { name: 'CREATE TEMP FUNCTION then SELECT', sql: 'CREATE TEMP FUNCTION f(x INT64) AS (x + 1); SELECT f(1)', code: 'INVALID_SQL' },
  { name: 'CREATE TEMP TABLE', sql: `CREATE TEMP TABLE t AS SELECT * FROM ${ORDERS}`, code: 'INVALID_SQL' },
  {
    name: 'EXPORT DATA',
    sql: `EXPORT DATA OPTIONS (uri = 'gs://bucket/*.csv', format = 'CSV') AS SELECT * FROM ${ORDERS}`,
    code: 'INVALID_SQL',
  },
  { name: 'DECLARE', sql: 'DECLARE x INT64 DEFAULT 1', code: 'INVALID_SQL' },
  { name: 'SET', sql: 'SET x = 1', code: 'INVALID_SQL' },
  { name: 'EXECUTE IMMEDIATE', sql: "EXECUTE IMMEDIATE 'SELECT * FROM `service-v1.globex.fact__orders`'", code: 'INVALID_SQL' },
  { name: 'BEGIN ... END block', sql: `BEGIN SELECT * FROM ${ORDERS}; END`, code: 'INVALID_SQL' },
  { name: 'BEGIN TRANSACTION', sql: 'BEGIN TRANSACTION', code: 'INVALID_SQL' },
  { name: 'CALL procedure', sql: 'CALL `service-v1.acme.proc`()', code: 'INVALID_SQL' },
  { name: 'IF statement', sql: `IF (SELECT COUNT(*) FROM ${ORDERS}) > 0 THEN SELECT 1; END IF`, code: 'INVALID_SQL' },
  { name: 'LOOP', sql: 'LOOP SELECT 1; END LOOP', code: 'INVALID_SQL' },
  { name: 'WHILE', sql: 'WHILE TRUE DO SELECT 1; END WHILE', code: 'INVALID_SQL' },
  { name: 'GRANT', sql: 'GRANT `roles/bigquery.dataViewer` ON TABLE `service-v1.acme.fact__orders` TO "user:a@b.c"', code: 'INVALID_SQL' },
  { name: 'WITH ... INSERT', sql: `WITH x AS (SELECT 1 AS a) INSERT INTO ${ORDERS} (order_id) SELECT 'a' FROM x`, code: 'INVALID_SQL' },
  { name: 'SELECT INTO', sql: `SELECT * INTO backup FROM ${ORDERS}`, code: 'INVALID_SQL' },
  { name: 'SESSION_USER() (the service account email)', sql: 'SELECT SESSION_USER() AS who', code: 'INVALID_SQL' },
  {
    name: 'SESSION_USER() in a filter',
    sql: `SELECT COUNT(*) FROM ${ORDERS} WHERE STARTS_WITH(SESSION_USER(), 'svc')`,
    code: 'INVALID_SQL',
  },
  { name: 'system variable @@project_id', sql: 'SELECT @@project_id', code: 'INVALID_SQL' },
  { name: 'system variable @@session_user', sql: `SELECT @@session_user FROM ${ORDERS}`, code: 'INVALID_SQL' },
  { name: 'legacy SQL switch', sql: '#legacySQL\nSELECT * FROM [service-v1:globex.fact__orders]', code: 'INVALID_SQL' },
  { name: 'leading parenthesis before a DML', sql: `(DELETE FROM ${ORDERS} WHERE TRUE)`, code: 'INVALID_SQL' },
  { name: 'EXPLAIN', sql: `EXPLAIN SELECT * FROM ${ORDERS}`, code: 'INVALID_SQL' },

  // Tables and datasets outside the brand
  { name: 'other dataset', sql: 'SELECT * FROM `service-v1.globex.fact__orders`', code: 'FORBIDDEN_TABLE' },
  { name: 'other dataset, split quoting', sql: 'SELECT * FROM `service-v1`.globex.fact__orders', code: 'FORBIDDEN_TABLE' },
  { name: 'other dataset, quoted dataset and table', sql: 'SELECT * FROM `service-v1`.`globex.fact__orders`', code: 'FORBIDDEN_TABLE' },
  { name: 'other dataset, unquoted', sql: 'SELECT * FROM service-v1.umbrella.fact__orders', code: 'FORBIDDEN_TABLE' },
  { name: 'other project', sql: 'SELECT * FROM `bigquery-public-data.samples.shakespeare`', code: 'FORBIDDEN_TABLE' },
  { name: 'other project, same dataset name', sql: 'SELECT * FROM `evil-project.acme.fact__orders`', code: 'FORBIDDEN_TABLE' },
  { name: 'dataset case differs', sql: 'SELECT * FROM `service-v1.ACME.fact__orders`', code: 'FORBIDDEN_TABLE' },
  { name: 'project case differs', sql: 'SELECT * FROM `SERVICE-V1.acme.fact__orders`', code: 'FORBIDDEN_TABLE' },
  { name: 'dataset prefix match', sql: 'SELECT * FROM `service-v1.acme_archive.fact__orders`', code: 'FORBIDDEN_TABLE' },
  { name: 'unqualified table', sql: 'SELECT * FROM fact__orders', code: 'FORBIDDEN_TABLE' },
  { name: 'two-part dataset.table', sql: 'SELECT * FROM acme.fact__orders', code: 'FORBIDDEN_TABLE' },
  { name: 'two-part other dataset', sql: 'SELECT * FROM globex.fact__orders', code: 'FORBIDDEN_TABLE' },
  { name: 'four-part path', sql: 'SELECT * FROM `service-v1.acme.fact__orders.extra`', code: 'FORBIDDEN_TABLE' },
  { name: 'empty path part', sql: 'SELECT * FROM `service-v1..fact__orders`', code: 'FORBIDDEN_TABLE' },
  {
    name: 'other dataset in JOIN',
    sql: `SELECT * FROM ${ORDERS} o JOIN \`service-v1.globex.dim__customers\` c USING (customer_id)`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in LEFT JOIN of a nested join',
    sql: `SELECT * FROM (${ORDERS} o LEFT JOIN \`service-v1.globex.dim__customers\` c USING (customer_id))`,
    code: 'FORBIDDEN_TABLE',
  },
  { name: 'other dataset in comma join', sql: `SELECT * FROM ${ORDERS}, \`service-v1.globex.fact__orders\``, code: 'FORBIDDEN_TABLE' },
  {
    name: 'other dataset in CTE body',
    sql: 'WITH x AS (SELECT * FROM `service-v1.globex.fact__orders`) SELECT * FROM x',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in second CTE',
    sql: `WITH a AS (SELECT * FROM ${ORDERS}), b AS (SELECT * FROM \`service-v1.globex.fact__orders\`) SELECT * FROM a`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in derived table',
    sql: 'SELECT * FROM (SELECT * FROM `service-v1.globex.fact__orders`)',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in scalar subquery',
    sql: `SELECT (SELECT MAX(revenue) FROM \`service-v1.globex.fact__orders\`) FROM ${ORDERS}`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in WHERE IN subquery',
    sql: `SELECT * FROM ${ORDERS} WHERE customer_id IN (SELECT customer_id FROM \`service-v1.globex.dim__customers\`)`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in EXISTS',
    sql: `SELECT 1 FROM ${ORDERS} WHERE EXISTS (SELECT 1 FROM \`service-v1.umbrella.fact__orders\`)`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in NOT EXISTS',
    sql: `SELECT 1 FROM ${ORDERS} WHERE NOT EXISTS (SELECT 1 FROM \`service-v1.umbrella.fact__orders\`)`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in HAVING',
    sql: `SELECT channel FROM ${ORDERS} GROUP BY channel HAVING COUNT(*) > (SELECT COUNT(*) FROM \`service-v1.globex.fact__orders\`)`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in QUALIFY',
    sql: `SELECT * FROM ${ORDERS} QUALIFY revenue > (SELECT AVG(revenue) FROM \`service-v1.globex.fact__orders\`)`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in ORDER BY',
    sql: `SELECT * FROM ${ORDERS} ORDER BY (SELECT 1 FROM \`service-v1.globex.fact__orders\` LIMIT 1)`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in LIMIT',
    sql: `SELECT * FROM ${ORDERS} LIMIT (SELECT COUNT(*) FROM \`service-v1.globex.fact__orders\`)`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in JOIN ON',
    sql: `SELECT * FROM ${ORDERS} o JOIN ${CUSTOMERS} c ON c.customer_id IN (SELECT customer_id FROM \`service-v1.globex.dim__customers\`)`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in UNION right side',
    sql: `SELECT order_id FROM ${ORDERS} UNION ALL SELECT order_id FROM \`service-v1.globex.fact__orders\``,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in INTERSECT inside parentheses',
    sql: `(SELECT 1 FROM ${ORDERS}) INTERSECT DISTINCT (SELECT 1 FROM \`service-v1.globex.fact__orders\`)`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in ARRAY subquery',
    sql: 'SELECT ARRAY(SELECT order_id FROM `service-v1.globex.fact__orders`)',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in UNNEST source',
    sql: 'SELECT * FROM UNNEST(ARRAY(SELECT order_id FROM `service-v1.globex.fact__orders`)) AS x',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in IN UNNEST',
    sql: `SELECT * FROM ${ORDERS} WHERE order_id IN UNNEST(ARRAY(SELECT order_id FROM \`service-v1.globex.fact__orders\`))`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in function argument',
    sql: 'SELECT COALESCE((SELECT MAX(revenue) FROM `service-v1.globex.fact__orders`), 0)',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in CASE',
    sql: 'SELECT CASE WHEN EXISTS (SELECT 1 FROM `service-v1.globex.fact__orders`) THEN 1 END',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in window ORDER BY',
    sql: `SELECT ROW_NUMBER() OVER (ORDER BY (SELECT 1 FROM \`service-v1.globex.t\` LIMIT 1)) FROM ${ORDERS}`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in PIVOT input',
    sql: "SELECT * FROM `service-v1.globex.agg__daily_revenue` PIVOT (SUM(revenue) FOR channel IN ('web'))",
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in UNPIVOT input',
    sql: 'SELECT * FROM `service-v1.globex.report__monthly_kpis` UNPIVOT (v FOR m IN (orders, revenue))',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset in lateral correlated subquery',
    sql: `SELECT * FROM ${ORDERS} o, (SELECT * FROM \`service-v1.globex.dim__customers\` c WHERE c.customer_id = o.customer_id)`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset deep in nested subqueries',
    sql: 'SELECT * FROM (SELECT * FROM (SELECT * FROM (SELECT * FROM `service-v1.globex.fact__orders`)))',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset with FOR SYSTEM_TIME AS OF',
    sql: 'SELECT * FROM `service-v1.globex.fact__orders` FOR SYSTEM_TIME AS OF CURRENT_TIMESTAMP()',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset inside FOR SYSTEM_TIME expression',
    sql: `SELECT * FROM ${ORDERS} FOR SYSTEM_TIME AS OF (SELECT MAX(event_ts) FROM \`service-v1.globex.raw__web_events\`)`,
    code: 'FORBIDDEN_TABLE',
  },
  { name: 'wildcard table in another dataset', sql: 'SELECT * FROM `service-v1.globex.*`', code: 'FORBIDDEN_TABLE' },
  { name: 'wildcard dataset', sql: 'SELECT * FROM `service-v1.*.fact__orders`', code: 'FORBIDDEN_TABLE' },
  {
    name: 'CTE name does not leak out of its subquery',
    sql: 'SELECT * FROM (WITH x AS (SELECT 1 AS a) SELECT * FROM x), x',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'later CTE is not visible to an earlier one',
    sql: 'WITH a AS (SELECT * FROM b), b AS (SELECT 1 AS x) SELECT * FROM a',
    code: 'FORBIDDEN_TABLE',
  },
  { name: 'CTE cannot read itself without RECURSIVE', sql: 'WITH a AS (SELECT * FROM a) SELECT * FROM a', code: 'FORBIDDEN_TABLE' },
  { name: 'dotted name is not a CTE', sql: 'WITH x AS (SELECT 1 AS a) SELECT * FROM x.fact__orders', code: 'FORBIDDEN_TABLE' },

  // Hostile twins of correlated array paths
  {
    name: 'path whose first name is not an alias (another dataset)',
    sql: `SELECT * FROM ${ORDERS} AS o, globex.fact__orders`,
    code: 'FORBIDDEN_TABLE',
  },
  { name: 'path from an alias defined only later', sql: `SELECT * FROM o.items AS i, ${ORDERS} AS o`, code: 'FORBIDDEN_TABLE' },
  {
    name: 'alias in another case does not make a path an array',
    sql: `SELECT * FROM ${ORDERS} AS Globex, globex.fact__orders`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'sibling alias is not in scope in a derived table',
    sql: `SELECT * FROM ${ORDERS} AS globex, (SELECT * FROM globex.fact__orders)`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'outer alias is not in scope in a CTE body',
    sql: `SELECT (WITH c AS (SELECT * FROM globex.fact__orders) SELECT COUNT(*) FROM c) FROM ${ORDERS} AS globex`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'alias from the other branch of a UNION',
    sql: `SELECT 1 FROM ${ORDERS} AS globex UNION ALL SELECT 1 FROM globex.fact__orders`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'alias from a sibling subquery',
    sql: `SELECT (SELECT 1 FROM ${ORDERS} AS globex), (SELECT COUNT(*) FROM globex.fact__orders)`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'right side of a FULL JOIN does not see the left alias',
    sql: `SELECT * FROM ${ORDERS} AS globex FULL JOIN globex.fact__orders ON TRUE`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'alias spelt like the project',
    sql: `SELECT * FROM ${ORDERS} AS \`service-v1\`, \`service-v1\`.globex.fact__orders`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'alias followed by a dotted quoted path',
    sql: `SELECT * FROM ${ORDERS} AS globex, \`globex.fact__orders\``,
    code: 'FORBIDDEN_TABLE',
  },
  { name: 'alias joined to a dotted quoted part', sql: `SELECT * FROM ${ORDERS} AS o, o.\`x.y\``, code: 'FORBIDDEN_TABLE' },
  {
    name: 'CTE name is not a range variable until it is in FROM',
    sql: 'WITH globex AS (SELECT 1 AS x) SELECT * FROM globex.fact__orders',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'array path next to another dataset',
    sql: `SELECT * FROM ${ORDERS} AS o, o.items AS i, \`service-v1.globex.dim__customers\``,
    code: 'FORBIDDEN_TABLE',
  },

  // Hostile twins of pipe syntax
  { name: 'FROM-first pipe query of another dataset', sql: 'FROM `service-v1.globex.fact__orders` |> WHERE TRUE', code: 'FORBIDDEN_TABLE' },
  {
    name: 'pipe JOIN of another tenant',
    sql: `FROM ${ORDERS} |> JOIN \`service-v1.globex.dim__customers\` USING (customer_id)`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'pipe LEFT JOIN of an unqualified table',
    sql: `FROM ${ORDERS} |> LEFT JOIN dim__customers USING (customer_id)`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'pipe UNION ALL of another tenant',
    sql: `FROM ${ORDERS} |> UNION ALL (SELECT * FROM \`service-v1.globex.fact__orders\`)`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'pipe EXCEPT of another tenant',
    sql: `FROM ${ORDERS} |> SELECT order_id |> EXCEPT DISTINCT (FROM \`service-v1.globex.fact__orders\` |> SELECT order_id)`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'pipe WHERE subquery of another tenant',
    sql: `FROM ${ORDERS} |> WHERE customer_id IN (SELECT customer_id FROM \`service-v1.globex.dim__customers\`)`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'pipe EXTEND subquery of another tenant',
    sql: `FROM ${ORDERS} |> EXTEND (SELECT MAX(revenue) FROM \`service-v1.globex.fact__orders\`) AS m`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'pipe AGGREGATE subquery of another tenant',
    sql: `FROM ${ORDERS} |> AGGREGATE SUM((SELECT 1 FROM \`service-v1.globex.t\` LIMIT 1)) GROUP BY channel`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'pipe step reading another tenant deep in a subquery',
    sql: `SELECT * FROM (FROM ${ORDERS} |> JOIN (SELECT * FROM \`service-v1.globex.dim__customers\`) USING (customer_id))`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'pipe in a CTE reading another tenant',
    sql: 'WITH t AS (FROM `service-v1.globex.fact__orders` |> WHERE TRUE) SELECT * FROM t',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'FROM-first after a WITH reading another tenant',
    sql: 'WITH a AS (SELECT 1 AS x) FROM `service-v1.globex.fact__orders` |> WHERE TRUE',
    code: 'FORBIDDEN_TABLE',
  },
  { name: 'pipe CALL of a table-valued function', sql: `FROM ${ORDERS} |> CALL \`service-v1.acme.tvf\`()`, code: 'FORBIDDEN_TABLE' },
  {
    name: 'pipe step with EXTERNAL_QUERY',
    sql: `FROM ${ORDERS} |> EXTEND EXTERNAL_QUERY('us.conn', 'SELECT 1') AS x`,
    code: 'FORBIDDEN_TABLE',
  },
  { name: 'pipe step with SESSION_USER()', sql: `FROM ${ORDERS} |> EXTEND SESSION_USER() AS who`, code: 'INVALID_SQL' },
  {
    name: 'pipe alias path (pipe steps do not see FROM aliases)',
    sql: `FROM ${ORDERS} AS globex |> JOIN globex.fact__orders`,
    code: 'FORBIDDEN_TABLE',
  },
  { name: 'pipe operator the checker does not read', sql: `FROM ${ORDERS} |> DISTINCT`, code: 'QUERY_FAILED' },
  { name: 'pipe with a space inside the operator', sql: `FROM ${ORDERS} | > WHERE TRUE`, code: 'QUERY_FAILED' },

  // INFORMATION_SCHEMA beyond the dataset's COLUMNS view
  { name: 'INFORMATION_SCHEMA.TABLES', sql: 'SELECT * FROM `service-v1.acme.INFORMATION_SCHEMA.TABLES`', code: 'FORBIDDEN_TABLE' },
  {
    name: 'INFORMATION_SCHEMA.COLUMN_FIELD_PATHS',
    sql: 'SELECT * FROM `service-v1.acme`.INFORMATION_SCHEMA.COLUMN_FIELD_PATHS',
    code: 'FORBIDDEN_TABLE',
  },
  { name: 'region-qualified INFORMATION_SCHEMA', sql: 'SELECT * FROM `region-us`.INFORMATION_SCHEMA.JOBS', code: 'FORBIDDEN_TABLE' },
  {
    name: 'project region INFORMATION_SCHEMA',
    sql: 'SELECT * FROM `service-v1.region-us.INFORMATION_SCHEMA.JOBS_BY_PROJECT`',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'project-level INFORMATION_SCHEMA.SCHEMATA',
    sql: 'SELECT * FROM `service-v1`.INFORMATION_SCHEMA.SCHEMATA',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'other dataset INFORMATION_SCHEMA.COLUMNS',
    sql: 'SELECT * FROM `service-v1.globex.INFORMATION_SCHEMA.COLUMNS`',
    code: 'FORBIDDEN_TABLE',
  },
  { name: 'unqualified INFORMATION_SCHEMA', sql: 'SELECT * FROM INFORMATION_SCHEMA.COLUMNS', code: 'FORBIDDEN_TABLE' },
  { name: 'INFORMATION_SCHEMA as a table name', sql: 'SELECT * FROM `service-v1.acme.INFORMATION_SCHEMA`', code: 'FORBIDDEN_TABLE' },

  // Table functions, external data, ML, change history, routines
  { name: 'EXTERNAL_QUERY in FROM', sql: "SELECT * FROM EXTERNAL_QUERY('us.conn', 'SELECT * FROM users')", code: 'FORBIDDEN_TABLE' },
  {
    name: 'EXTERNAL_QUERY in a subquery',
    sql: "SELECT (SELECT COUNT(*) FROM EXTERNAL_QUERY('us.conn', 'SELECT 1'))",
    code: 'FORBIDDEN_TABLE',
  },
  { name: 'EXTERNAL_QUERY as a scalar call', sql: "SELECT EXTERNAL_QUERY('us.conn', 'SELECT 1')", code: 'FORBIDDEN_TABLE' },
  { name: 'table-valued function of the dataset', sql: 'SELECT * FROM `service-v1.acme.top_customers`(10)', code: 'FORBIDDEN_TABLE' },
  { name: 'table-valued function elsewhere', sql: 'SELECT * FROM `service-v1.globex.tvf`()', code: 'FORBIDDEN_TABLE' },
  { name: 'ML.PREDICT', sql: 'SELECT ML.PREDICT(1)', code: 'FORBIDDEN_TABLE' },
  { name: 'ML function via SAFE', sql: 'SELECT SAFE.ML.STANDARD_SCALER(1)', code: 'FORBIDDEN_TABLE' },
  { name: 'AI.GENERATE', sql: "SELECT AI.GENERATE('prompt', connection_id => 'us.conn')", code: 'FORBIDDEN_TABLE' },
  { name: 'APPENDS scalar', sql: 'SELECT APPENDS(1)', code: 'FORBIDDEN_TABLE' },
  { name: 'CHANGES in FROM', sql: 'SELECT * FROM CHANGES(NULL, NULL)', code: 'FORBIDDEN_TABLE' },
  { name: 'VECTOR_SEARCH', sql: "SELECT VECTOR_SEARCH('a', 'b')", code: 'FORBIDDEN_TABLE' },
  { name: 'routine of another dataset', sql: 'SELECT `service-v1.globex.f`(1)', code: 'FORBIDDEN_TABLE' },
  { name: 'routine of another project', sql: 'SELECT `bqutil.fn.median`([1, 2])', code: 'FORBIDDEN_TABLE' },
  { name: 'dataset-qualified routine', sql: 'SELECT globex.f(1)', code: 'FORBIDDEN_TABLE' },
  { name: 'routine in a nested expression', sql: `SELECT SUM(\`service-v1.globex.f\`(revenue)) FROM ${ORDERS}`, code: 'FORBIDDEN_TABLE' },
  { name: 'KEYS namespace (KMS)', sql: "SELECT KEYS.KEYSET_CHAIN('gcp-kms://x', b'y')", code: 'FORBIDDEN_TABLE' },

  // Syntax and lexical tricks
  { name: 'misspelt SELECT', sql: `SELEC * FROM ${ORDERS}`, code: 'QUERY_FAILED' },
  { name: 'syntax error after SELECT', sql: `SELECT * FORM ${ORDERS}`, code: 'QUERY_FAILED' },
  { name: 'empty', sql: '', code: 'QUERY_FAILED' },
  { name: 'only a comment', sql: '-- nothing', code: 'QUERY_FAILED' },
  { name: 'unterminated string', sql: "SELECT 'abc FROM `service-v1.globex.t`", code: 'QUERY_FAILED' },
  { name: 'unterminated double-quoted string', sql: 'SELECT "abc', code: 'QUERY_FAILED' },
  { name: 'unterminated triple-quoted string', sql: "SELECT '''abc\n", code: 'QUERY_FAILED' },
  { name: 'unterminated raw string', sql: "SELECT r'abc", code: 'QUERY_FAILED' },
  { name: 'unterminated bytes string', sql: 'SELECT b"abc', code: 'QUERY_FAILED' },
  { name: 'unterminated backtick identifier', sql: 'SELECT * FROM `service-v1.acme.fact__orders', code: 'QUERY_FAILED' },
  { name: 'unterminated block comment', sql: `SELECT 1 FROM ${ORDERS} /* never closed`, code: 'QUERY_FAILED' },
  { name: 'newline inside a single-quoted string', sql: "SELECT 'a\nb'", code: 'QUERY_FAILED' },
  {
    name: 'raw string escaping its quote (parser/BigQuery disagree)',
    sql: "SELECT r'\\', ' , (SELECT MAX(revenue) FROM `service-v1.globex.fact__orders`) --'",
    code: 'QUERY_FAILED',
  },
  { name: 'bytes string escaping its quote', sql: "SELECT b'\\'', (SELECT 1 FROM `service-v1.globex.t`), '\\''", code: 'QUERY_FAILED' },
  { name: 'backslash in a quoted identifier', sql: 'SELECT `a\\`, (SELECT 1 FROM `service-v1.globex.t`), `b`', code: 'QUERY_FAILED' },
  { name: 'doubled backtick', sql: 'SELECT `a``b` FROM `service-v1.acme.t`', code: 'QUERY_FAILED' },
  { name: 'doubled single quote', sql: "SELECT 'a''b'", code: 'QUERY_FAILED' },
  { name: 'nested block comment', sql: 'SELECT 1 /* /* */, (SELECT 1 FROM `service-v1.globex.t`) -- */', code: 'QUERY_FAILED' },
  {
    name: 'comment ended by a lone CR',
    sql: 'SELECT 1 --\r, (SELECT MAX(revenue) FROM `service-v1.globex.fact__orders`)',
    code: 'FORBIDDEN_TABLE',
  },
  { name: 'comment with U+2028', sql: 'SELECT 1 -- x\u2028, (SELECT 1 FROM `service-v1.globex.t`)', code: 'QUERY_FAILED' },
  { name: 'dollar-quoted string', sql: 'SELECT $$ (SELECT 1 FROM `service-v1.globex.t`) $$', code: 'QUERY_FAILED' },
  { name: 'hex literal prefix', sql: "SELECT x'41' FROM `service-v1.acme.t`", code: 'QUERY_FAILED' },
  { name: 'national string prefix', sql: "SELECT N'\\', (SELECT 1 FROM `service-v1.globex.t`), '\\'", code: 'QUERY_FAILED' },
  { name: 'template placeholder', sql: 'SELECT * FROM `service-v1.{dataset}.fact__orders`', code: 'FORBIDDEN_TABLE' },
  { name: 'template placeholder unquoted', sql: 'SELECT * FROM service-v1.{dataset}.fact__orders', code: 'QUERY_FAILED' },
  { name: 'query parameter', sql: 'SELECT * FROM `service-v1.acme.t` WHERE x = @p', code: 'QUERY_FAILED' },
  { name: 'non-ASCII outside quotes', sql: 'SELECT ＊ FROM `service-v1.acme.t`', code: 'QUERY_FAILED' },
  { name: 'NUL byte', sql: 'SELECT 1\u0000', code: 'QUERY_FAILED' },
  { name: 'unbalanced parenthesis', sql: 'SELECT (1', code: 'QUERY_FAILED' },
  { name: 'unbalanced CASE', sql: 'SELECT CASE WHEN TRUE THEN 1', code: 'QUERY_FAILED' },
  { name: 'too long', sql: `SELECT '${'x'.repeat(102_400)}'`, code: 'QUERY_FAILED' },
  { name: 'nesting too deep', sql: `SELECT ${'('.repeat(40)}1${')'.repeat(40)}`, code: 'QUERY_FAILED' },
  { name: 'parser recursion limit', sql: `SELECT ${'(SELECT '.repeat(31)}1${')'.repeat(31)}`, code: 'QUERY_FAILED' },
  { name: 'exponential CAST nesting', sql: `SELECT ${'CAST('.repeat(24)}1 +`, code: 'QUERY_FAILED' },
  { name: 'exponential POSITION nesting', sql: `SELECT ${'POSITION('.repeat(12)}1 +`, code: 'QUERY_FAILED' },
  { name: 'exponential NOT -( nesting', sql: `SELECT ${'NOT -('.repeat(20)}1 +${')'.repeat(20)}`, code: 'QUERY_FAILED' },
  { name: 'exponential INTERVAL chain', sql: `SELECT ${'INTERVAL '.repeat(30)}1 +`, code: 'QUERY_FAILED' },
  { name: 'FROM-first query', sql: `FROM ${ORDERS} SELECT *`, code: 'QUERY_FAILED' },
  { name: 'VALUES', sql: 'VALUES (1), (2)', code: 'QUERY_FAILED' },
  { name: 'TABLE statement', sql: 'SELECT * FROM (TABLE x)', code: 'QUERY_FAILED' },
  // Hostile twins of the WEEK cases: the date part is inert, what surrounds it is still walked.
  {
    name: 'INTERVAL WEEK whose count reads another dataset',
    sql: `SELECT DATE_SUB(CURRENT_DATE(), INTERVAL (SELECT COUNT(*) FROM \`service-v1.globex.fact__orders\`) WEEK) AS d`,
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'EXTRACT(WEEK(MONDAY) FROM a subquery of another dataset)',
    sql: 'SELECT EXTRACT(WEEK(MONDAY) FROM (SELECT MAX(order_date) FROM `service-v1.globex.fact__orders`)) AS wk',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'GENERATE_DATE_ARRAY by WEEK bounded by another dataset',
    sql: "SELECT d FROM UNNEST(GENERATE_DATE_ARRAY(DATE '2024-01-01', (SELECT MAX(order_date) FROM `service-v1.umbrella.fact__orders`), INTERVAL 1 WEEK)) AS d",
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'DATE_ADD by WEEK over a table of another project',
    sql: 'SELECT DATE_ADD(order_date, INTERVAL 2 WEEK) FROM `other-project.acme.fact__orders`',
    code: 'FORBIDDEN_TABLE',
  },
  // Hostile twins of round 4: the rewrites before parsing keep every table in view.
  {
    name: 'a planted service-v1 in an emoji comment before another dataset',
    sql: 'SELECT 1 /* 🚀🚀 service-v1 */ FROM service-v1.globex.fact__orders',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'a planted project path in an emoji comment before a foreign project',
    sql: '-- 📈📈📈 `service-v1.acme.fact__orders`\nSELECT * FROM `service-v2.acme.fact__orders`',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'time travel after an alias on another dataset',
    sql: 'SELECT * FROM `service-v1.globex.dim__customers` AS c FOR SYSTEM_TIME AS OF CURRENT_TIMESTAMP()',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'time travel whose expression reads another dataset',
    sql: 'SELECT * FROM `service-v1.acme.dim__customers` AS c FOR SYSTEM_TIME AS OF (SELECT MAX(ts) FROM `service-v1.globex.t`)',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'time travel after an alias, then a join of another dataset',
    sql: 'SELECT 1 FROM `service-v1.acme.t` AS a FOR SYSTEM_TIME AS OF CURRENT_TIMESTAMP() JOIN `service-v1.globex.t` AS b ON TRUE',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'a typed array literal whose type list holds a subquery',
    sql: 'SELECT ARRAY<(SELECT MAX(x) FROM `service-v1.globex.t`)>[1]',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'a typed array literal whose type list calls a function',
    sql: 'SELECT ARRAY<EXTERNAL_QUERY(1, 2)>[1] FROM `service-v1.acme.t`',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'a typed array literal whose elements read another dataset',
    sql: 'SELECT ARRAY<STRUCT<a INT64>>[(SELECT AS STRUCT COUNT(*) FROM `service-v1.globex.fact__orders`)]',
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'a raw bytes literal beside a table of another dataset',
    sql: "SELECT rb'service-v1.acme.t' FROM `service-v1.globex.t`",
    code: 'FORBIDDEN_TABLE',
  },
  {
    name: 'WEEK(...) carrying an identity function',
    sql: 'SELECT EXTRACT(WEEK(MONDAY) FROM order_date), SESSION_USER() FROM `service-v1.acme.fact__orders`',
    code: 'INVALID_SQL',
  },
];
