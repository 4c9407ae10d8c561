SELECT EXTRACT(DAYOFWEEK FROM order_date) AS dow, FORMAT_DATE('%A', order_date) AS weekday,
  COUNT(*) AS orders, ROUND(AVG(revenue), 2) AS avg_revenue
FROM `service-v1.acme.fact__orders`
GROUP BY dow, weekday
ORDER BY dow
