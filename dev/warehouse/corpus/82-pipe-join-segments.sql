-- Orders per loyalty segment: a pipe JOIN that still reads the input's alias
FROM `service-v1.acme.fact__orders` AS o
|> WHERE o.quantity >= 1
|> JOIN `service-v1.acme.dim__customers` AS c ON c.customer_id = o.customer_id
|> AGGREGATE COUNT(*) AS orders, COUNT(DISTINCT o.customer_id) AS customers GROUP BY c.segment
|> ORDER BY orders DESC
