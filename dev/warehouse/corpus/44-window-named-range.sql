SELECT day, channel, orders,
  SUM(orders) OVER w AS orders_7d,
  RANK() OVER (PARTITION BY day ORDER BY orders DESC) AS channel_rank
FROM `service-v1.umbrella.agg__daily_revenue`
WINDOW w AS (PARTITION BY channel ORDER BY day ROWS BETWEEN 6 PRECEDING AND CURRENT ROW)
ORDER BY day DESC, channel
LIMIT 21
