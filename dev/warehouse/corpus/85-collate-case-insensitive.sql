SELECT COUNT(*) AS web_orders
FROM `service-v1.acme.fact__orders`
WHERE COLLATE(channel, 'und:ci') = 'WEB'
