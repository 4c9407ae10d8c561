WITH product_sales AS (
  SELECT product_id, SUM(quantity) AS units, SUM(revenue) AS revenue
  FROM `service-v1.acme.fact__orders`
  WHERE order_date BETWEEN DATE_SUB(CURRENT_DATE(), INTERVAL 90 DAY) AND DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY)
  GROUP BY product_id
)
SELECT p.name, p.category, s.units, ROUND(s.revenue, 2) AS revenue
FROM product_sales AS s
JOIN `service-v1.acme.dim__products` AS p USING (product_id)
ORDER BY s.revenue DESC
LIMIT 10
