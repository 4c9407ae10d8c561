SELECT day, revenue,
  SUM(revenue) OVER (ORDER BY day ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running_revenue
FROM (
  SELECT day, SUM(revenue) AS revenue
  FROM `service-v1.acme.agg__daily_revenue`
  GROUP BY day
)
ORDER BY day
