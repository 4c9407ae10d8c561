SELECT customer_id, COUNT(*) AS orders
FROM `service-v1.globex.fact__orders`
GROUP BY ALL
QUALIFY RANK() OVER (ORDER BY COUNT(*) DESC) <= 5
ORDER BY orders DESC, customer_id
