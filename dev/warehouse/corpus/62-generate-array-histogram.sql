WITH buckets AS (
  SELECT b AS lower, b + 100 AS upper FROM UNNEST(GENERATE_ARRAY(0, 900, 100)) AS b
)
SELECT lower, upper, COUNT(o.order_id) AS orders
FROM buckets
LEFT JOIN `service-v1.globex.fact__orders` o ON o.revenue >= lower AND o.revenue < upper
GROUP BY lower, upper
ORDER BY lower
