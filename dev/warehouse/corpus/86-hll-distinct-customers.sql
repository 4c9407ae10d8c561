-- Distinct customers per month from HLL sketches, merged over channels
WITH sketches AS (
  SELECT DATE_TRUNC(order_date, MONTH) AS month, channel, HLL_COUNT.INIT(customer_id) AS customers_sketch
  FROM `service-v1.acme.fact__orders`
  GROUP BY month, channel
)
SELECT month, HLL_COUNT.MERGE(customers_sketch) AS customers
FROM sketches
GROUP BY month
ORDER BY month
