SELECT channel,
  SAFE_DIVIDE(SUM(revenue), COUNT(DISTINCT order_id)) AS aov,
  SAFE_DIVIDE(SUM(revenue), 0) AS never
FROM `service-v1.acme.fact__orders`
GROUP BY channel
