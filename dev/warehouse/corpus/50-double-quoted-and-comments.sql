# BigQuery accepts hash comments and "double-quoted" strings
SELECT "web" AS channel_label, -- a trailing comment with `backticks` and DATE_TRUNC(x, MONTH)
  COUNT(*) AS orders /* block comment: SAFE_DIVIDE(a, b) */
FROM `service-v1`.acme.fact__orders
WHERE channel = "web" AND order_id LIKE 'ORD-%'
