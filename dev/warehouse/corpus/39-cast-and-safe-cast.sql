SELECT CAST(quantity AS STRING) AS qty_text,
  SAFE_CAST(SUBSTR(order_id, 5) AS INT64) AS order_number,
  CAST(revenue AS INT64) AS revenue_rounded,
  CAST(order_date AS STRING) AS day_text
FROM `service-v1.globex.fact__orders`
ORDER BY order_id
LIMIT 5
