SELECT customer_id FROM `service-v1.globex.fact__orders` WHERE channel = 'web'
INTERSECT DISTINCT
SELECT customer_id FROM `service-v1.globex.fact__orders` WHERE channel = 'marketplace'
ORDER BY customer_id
LIMIT 25
