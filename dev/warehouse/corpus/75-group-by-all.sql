SELECT channel, EXTRACT(YEAR FROM order_date) AS year, COUNT(*) AS orders
FROM `service-v1.globex.fact__orders`
GROUP BY ALL
ORDER BY year, channel
