SELECT order_id,
  IF(quantity > 1, 'multi', 'single') AS kind,
  NULLIF(channel, 'store') AS non_store_channel,
  GREATEST(revenue, 100) AS floor_100,
  DIV(quantity * 10, 3) AS tenths_div, MOD(quantity, 2) AS odd
FROM `service-v1.umbrella.fact__orders`
ORDER BY order_id
LIMIT 10
