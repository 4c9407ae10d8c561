SELECT DISTINCT channel,
  PERCENTILE_CONT(revenue, 0.5) OVER (PARTITION BY channel) AS median,
  PERCENTILE_CONT(revenue, 0.9) OVER (PARTITION BY channel) AS p90
FROM `service-v1.globex.fact__orders`
