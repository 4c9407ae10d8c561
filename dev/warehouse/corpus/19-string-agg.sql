SELECT category, STRING_AGG(name, ', ' ORDER BY name) AS products, COUNT(*) AS n
FROM `service-v1.globex.dim__products`
GROUP BY category
ORDER BY category
