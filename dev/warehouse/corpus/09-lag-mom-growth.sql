SELECT month, revenue,
  LAG(revenue) OVER (ORDER BY month) AS prev_revenue,
  SAFE_DIVIDE(revenue - LAG(revenue) OVER (ORDER BY month), LAG(revenue) OVER (ORDER BY month)) AS mom_growth
FROM `service-v1.acme.report__monthly_kpis`
ORDER BY month
