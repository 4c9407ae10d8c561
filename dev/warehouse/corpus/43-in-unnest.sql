SELECT channel, COUNT(*) AS orders
FROM `service-v1.acme.fact__orders`
WHERE channel IN UNNEST(['web', 'marketplace'])
  AND order_date >= DATE_ADD(CURRENT_DATE(), INTERVAL -7 DAY)
GROUP BY channel
ORDER BY channel
