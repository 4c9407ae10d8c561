SELECT channel,
  STRUCT(COUNT(*) AS orders, ROUND(SUM(revenue), 2) AS revenue) AS totals
FROM `service-v1.umbrella.fact__orders`
GROUP BY channel
ORDER BY channel
