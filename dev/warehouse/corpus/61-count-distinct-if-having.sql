SELECT product_id,
  COUNT(DISTINCT IF(channel = 'web', customer_id, NULL)) AS web_buyers,
  COUNT(DISTINCT customer_id) AS buyers
FROM `service-v1.globex.fact__orders`
GROUP BY product_id
HAVING COUNT(DISTINCT customer_id) > 50
ORDER BY buyers DESC NULLS LAST
