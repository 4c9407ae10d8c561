SELECT APPROX_TOP_COUNT(product_id, 5) AS top_products
FROM `service-v1.acme.fact__orders`
