SELECT order_id,
  UNIX_SECONDS(order_ts) AS epoch_s,
  TIMESTAMP_SECONDS(UNIX_SECONDS(order_ts)) = order_ts AS round_trips,
  FORMAT_TIMESTAMP('%Y-%m-%d %H:%M', order_ts) AS minute
FROM `service-v1.globex.fact__orders`
ORDER BY order_id
LIMIT 5
