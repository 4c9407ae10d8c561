SELECT category,
  ARRAY(SELECT AS STRUCT name, unit_price FROM `service-v1.umbrella.dim__products` p2
        WHERE p2.category = p.category ORDER BY unit_price DESC LIMIT 2) AS priciest
FROM (SELECT DISTINCT category FROM `service-v1.umbrella.dim__products`) p
ORDER BY category
