SELECT FORMAT_DATE('%Y-%m', order_date) AS ym,
  COUNTIF(channel = 'web') AS web_orders,
  COUNTIF(quantity > 1) AS multi_unit,
  ROUND(COUNTIF(channel = 'web') / COUNT(*), 4) AS web_share
FROM `service-v1.acme.fact__orders`
GROUP BY ym
ORDER BY ym
