SELECT order_id, revenue
FROM `service-v1.acme.fact__orders`
ORDER BY revenue DESC, order_id
LIMIT 10 OFFSET 20
