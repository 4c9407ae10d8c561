SELECT RANGE_BUCKET(revenue, [0, 50, 100, 250, 500, 1000]) AS bucket, COUNT(*) AS orders
FROM `service-v1.globex.fact__orders`
GROUP BY bucket
ORDER BY bucket
