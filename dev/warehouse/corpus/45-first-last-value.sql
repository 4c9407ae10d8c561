SELECT DISTINCT customer_id,
  FIRST_VALUE(channel) OVER (PARTITION BY customer_id ORDER BY order_ts) AS first_channel,
  LAST_VALUE(channel) OVER (PARTITION BY customer_id ORDER BY order_ts ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS last_channel
FROM `service-v1.globex.fact__orders`
ORDER BY customer_id
LIMIT 20
