WITH first_orders AS (
  SELECT customer_id, DATE_TRUNC(MIN(order_date), MONTH) AS cohort
  FROM `service-v1.acme.fact__orders`
  GROUP BY customer_id
), activity AS (
  SELECT DISTINCT o.customer_id, f.cohort, DATE_TRUNC(o.order_date, MONTH) AS month
  FROM `service-v1.acme.fact__orders` o
  JOIN first_orders f USING (customer_id)
)
SELECT cohort, DATE_DIFF(month, cohort, MONTH) AS months_since, COUNT(*) AS customers
FROM activity
GROUP BY cohort, months_since
ORDER BY cohort, months_since
