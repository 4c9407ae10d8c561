SELECT DATE(order_ts, 'America/New_York') AS local_day,
  EXTRACT(HOUR FROM order_ts AT TIME ZONE 'America/New_York') AS local_hour,
  FORMAT_TIMESTAMP('%H:%M', order_ts, 'Europe/Berlin') AS berlin_time,
  TIMESTAMP_TRUNC(order_ts, DAY, 'America/New_York') AS local_midnight
FROM `service-v1.globex.fact__orders`
ORDER BY order_id
LIMIT 5
