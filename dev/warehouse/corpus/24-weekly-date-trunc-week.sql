SELECT DATE_TRUNC(order_date, WEEK(MONDAY)) AS week, COUNT(*) AS orders
FROM `service-v1.umbrella.fact__orders`
GROUP BY week
ORDER BY week DESC
LIMIT 12
