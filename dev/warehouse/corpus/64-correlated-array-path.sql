WITH baskets AS (
  SELECT customer_id, ARRAY_AGG(product_id) AS products
  FROM `service-v1.globex.fact__orders`
  GROUP BY customer_id
)
SELECT customer_id, product
FROM baskets b, b.products AS product
LIMIT 10
