SELECT month, metric, value
FROM (
  SELECT month, CAST(orders AS FLOAT64) AS orders, revenue, CAST(customers AS FLOAT64) AS customers
  FROM `service-v1.acme.report__monthly_kpis`
)
UNPIVOT (value FOR metric IN (orders, revenue, customers))
ORDER BY month, metric
