SELECT APPROX_TOP_SUM(product_id, revenue, 5) AS top_products
FROM `service-v1.acme.fact__orders`
WHERE order_date >= DATE_SUB(CURRENT_DATE(), INTERVAL 90 DAY)
