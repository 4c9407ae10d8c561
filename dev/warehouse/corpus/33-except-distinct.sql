SELECT customer_id FROM `service-v1.globex.dim__customers`
EXCEPT DISTINCT
SELECT customer_id FROM `service-v1.globex.fact__orders`
ORDER BY customer_id
LIMIT 25
