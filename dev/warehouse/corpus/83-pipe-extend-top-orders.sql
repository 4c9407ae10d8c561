/* 🚀 top sellers */
FROM `service-v1.acme.fact__orders`
|> EXTEND revenue / NULLIF(quantity, 0) AS unit_revenue
|> WHERE unit_revenue > 0
|> SELECT order_id, channel, unit_revenue
|> ORDER BY unit_revenue DESC
|> LIMIT 10
