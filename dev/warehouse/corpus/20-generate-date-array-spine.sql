WITH calendar AS (
  SELECT day
  FROM UNNEST(GENERATE_DATE_ARRAY(DATE_SUB(CURRENT_DATE(), INTERVAL 14 DAY), DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY))) AS day
)
SELECT c.day, IFNULL(SUM(a.orders), 0) AS orders
FROM calendar c
LEFT JOIN `service-v1.umbrella.agg__daily_revenue` a ON a.day = c.day
GROUP BY c.day
ORDER BY c.day
