SELECT month, orders,
  LEAD(orders, 1, 0) OVER (ORDER BY month) AS next_orders,
  orders - LAG(orders, 12) OVER (ORDER BY month) AS yoy_delta
FROM `service-v1.acme.report__monthly_kpis`
ORDER BY month
