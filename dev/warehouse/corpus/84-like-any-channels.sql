-- Online channels by pattern
SELECT channel, COUNT(*) AS orders
FROM `service-v1.acme.fact__orders`
WHERE channel LIKE ANY ('web%', 'market%')
GROUP BY channel
