SELECT country,
  STRING_AGG(DISTINCT segment, '/' ORDER BY segment) AS segments,
  APPROX_COUNT_DISTINCT(customer_id) AS approx_customers
FROM `service-v1.acme.dim__customers`
GROUP BY country
ORDER BY country
