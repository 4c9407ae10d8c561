WITH firsts AS (
  SELECT customer_id, MIN(order_date) AS first_order
  FROM `service-v1.acme.fact__orders`
  GROUP BY customer_id
)
SELECT c.segment,
  ROUND(AVG(DATE_DIFF(f.first_order, c.signup_date, DAY)), 1) AS avg_days_to_first_order,
  MAX(DATE_DIFF(f.first_order, c.signup_date, WEEK)) AS max_weeks
FROM `service-v1.acme.dim__customers` c
JOIN firsts f USING (customer_id)
GROUP BY c.segment
ORDER BY c.segment
