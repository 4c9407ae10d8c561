SELECT
  CASE WHEN unit_price < 25 THEN 'under 25' WHEN unit_price < 100 THEN '25-100' ELSE '100+' END AS band,
  COUNT(*) AS products, ROUND(AVG(unit_price), 2) AS avg_price, MIN(unit_price) AS min_price, MAX(unit_price) AS max_price
FROM `service-v1.acme.dim__products`
GROUP BY band
ORDER BY min_price
