SELECT EXTRACT(HOUR FROM order_ts) AS hour, COUNT(*) AS orders
FROM `service-v1.acme.fact__orders`
WHERE order_ts >= TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 7 DAY)
GROUP BY hour
ORDER BY hour
