SELECT p.category, p.name, SUM(o.revenue) AS revenue
FROM `service-v1.acme.fact__orders` o
JOIN `service-v1.acme.dim__products` p ON p.product_id = o.product_id
GROUP BY p.category, p.name
QUALIFY ROW_NUMBER() OVER (PARTITION BY p.category ORDER BY SUM(o.revenue) DESC) <= 3
ORDER BY p.category, revenue DESC
