SELECT DATE_BUCKET(order_date, INTERVAL 7 DAY) AS week, ROUND(SUM(revenue), 2) AS revenue
FROM `service-v1.acme.fact__orders`
GROUP BY week
ORDER BY week DESC
LIMIT 12
