WITH baskets AS (
  SELECT customer_id,
    ARRAY_AGG(STRUCT(order_id, revenue) ORDER BY revenue DESC LIMIT 3) AS top_orders
  FROM `service-v1.globex.fact__orders`
  GROUP BY customer_id
)
SELECT b.customer_id, t.order_id, t.revenue, pos
FROM baskets b, UNNEST(b.top_orders) AS t WITH OFFSET AS pos
ORDER BY b.customer_id, pos
LIMIT 50
