SELECT * EXCEPT (currency, order_ts) REPLACE (ROUND(revenue * 1.2, 2) AS revenue)
FROM `service-v1.globex.fact__orders`
WHERE order_date = DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY)
ORDER BY order_id
LIMIT 20
