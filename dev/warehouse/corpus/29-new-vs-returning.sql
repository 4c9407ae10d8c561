WITH firsts AS (
  SELECT customer_id, MIN(order_date) AS first_date
  FROM `service-v1.globex.fact__orders`
  GROUP BY customer_id
)
SELECT o.order_date,
  COUNTIF(o.order_date = f.first_date) AS new_customer_orders,
  COUNTIF(o.order_date > f.first_date) AS returning_orders
FROM `service-v1.globex.fact__orders` o
JOIN firsts f USING (customer_id)
GROUP BY o.order_date
ORDER BY o.order_date DESC
LIMIT 30
