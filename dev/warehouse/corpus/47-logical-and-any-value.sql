SELECT customer_id,
  LOGICAL_AND(channel = 'web') AS web_only,
  LOGICAL_OR(quantity >= 3) AS ever_bulk,
  ANY_VALUE(currency) AS currency,
  MAX_BY(order_id, revenue) AS biggest_order
FROM `service-v1.umbrella.fact__orders`
GROUP BY customer_id
ORDER BY customer_id
LIMIT 20
