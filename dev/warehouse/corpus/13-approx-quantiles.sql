SELECT channel,
  APPROX_QUANTILES(revenue, 4) AS quartiles,
  APPROX_QUANTILES(revenue, 100)[OFFSET(50)] AS median_revenue
FROM `service-v1.acme.fact__orders`
GROUP BY channel
