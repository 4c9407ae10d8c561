SELECT DATE_TRUNC(order_date, MONTH) AS month, COUNT(*) AS orders, SUM(revenue) AS revenue
FROM `service-v1.acme.fact__orders`
GROUP BY month
ORDER BY month
