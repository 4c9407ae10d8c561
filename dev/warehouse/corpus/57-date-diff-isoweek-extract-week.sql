SELECT EXTRACT(ISOWEEK FROM order_date) AS iso_week, EXTRACT(WEEK FROM order_date) AS us_week,
  EXTRACT(QUARTER FROM order_date) AS quarter, COUNT(*) AS orders
FROM `service-v1.umbrella.fact__orders`
WHERE EXTRACT(YEAR FROM order_date) = EXTRACT(YEAR FROM DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY))
GROUP BY iso_week, us_week, quarter
ORDER BY iso_week
LIMIT 10
