SELECT channel, FORMAT('%.2f', SUM(revenue)) AS revenue_text, FORMAT("%'d", COUNT(*)) AS orders_text
FROM `service-v1.globex.fact__orders`
GROUP BY channel
ORDER BY channel
