-- Revenue and orders per channel for the last 30 days
SELECT channel, COUNT(*) AS orders, ROUND(SUM(revenue), 2) AS revenue
FROM `service-v1.acme.fact__orders`
WHERE order_date >= DATE_SUB(CURRENT_DATE(), INTERVAL 30 DAY)
GROUP BY channel
ORDER BY revenue DESC
