SELECT category,
  ROUND(CAST(SUM(unit_price) AS NUMERIC), 2) AS total_list_price,
  ROUND(AVG(unit_price), -1) AS avg_to_tens,
  TRUNC(MAX(unit_price), 1) AS max_truncated
FROM `service-v1.acme.dim__products`
GROUP BY category
ORDER BY category
