-- 📈 Revenue by channel, pipe syntax (last 30 days)
FROM `service-v1.acme.fact__orders`
|> WHERE order_date >= DATE_SUB(CURRENT_DATE(), INTERVAL 30 DAY)
|> AGGREGATE COUNT(*) AS orders, ROUND(SUM(revenue), 2) AS revenue GROUP BY channel
|> ORDER BY revenue DESC
