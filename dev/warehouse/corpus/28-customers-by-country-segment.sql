SELECT c.country, c.segment, COUNT(DISTINCT o.customer_id) AS buyers, ROUND(SUM(o.revenue), 2) AS revenue
FROM `service-v1.acme.fact__orders` AS o
JOIN `service-v1.acme.dim__customers` AS c ON c.customer_id = o.customer_id
WHERE o.order_date >= DATE_TRUNC(DATE_SUB(CURRENT_DATE(), INTERVAL 1 MONTH), MONTH)
  AND o.order_date < DATE_TRUNC(CURRENT_DATE(), MONTH)
GROUP BY ROLLUP (c.country, c.segment)
ORDER BY c.country, c.segment
