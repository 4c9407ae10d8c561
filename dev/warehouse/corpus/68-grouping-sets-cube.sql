SELECT channel, currency, COUNT(*) AS orders, GROUPING(channel) AS all_channels
FROM `service-v1.umbrella.fact__orders`
GROUP BY CUBE (channel, currency)
ORDER BY channel, currency
