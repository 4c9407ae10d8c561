SELECT ch AS channel, COUNT(o.order_id) AS orders
FROM UNNEST(['web', 'store', 'marketplace', 'phone']) AS ch
LEFT JOIN `service-v1.acme.fact__orders` o
  ON o.channel = ch AND o.order_date = DATE_SUB(CURRENT_DATE(), INTERVAL 1 DAY)
GROUP BY ch
ORDER BY ch
