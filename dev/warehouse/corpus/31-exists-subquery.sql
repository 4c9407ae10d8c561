SELECT COUNT(*) AS customers_with_web_and_store
FROM `service-v1.umbrella.dim__customers` c
WHERE EXISTS (SELECT 1 FROM `service-v1.umbrella.fact__orders` o WHERE o.customer_id = c.customer_id AND o.channel = 'web')
  AND c.customer_id IN (SELECT customer_id FROM `service-v1.umbrella.fact__orders` WHERE channel = 'store')
