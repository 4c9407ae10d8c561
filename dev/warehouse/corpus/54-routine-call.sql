SELECT `service-v1.acme.order_size_band`(quantity) AS band, COUNT(*) AS orders
FROM `service-v1.acme.fact__orders`
GROUP BY band
ORDER BY band
