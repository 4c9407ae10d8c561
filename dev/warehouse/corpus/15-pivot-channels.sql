SELECT *
FROM (
  SELECT FORMAT_DATE('%Y-%m', day) AS month, channel, revenue
  FROM `service-v1.acme.agg__daily_revenue`
)
PIVOT (SUM(revenue) FOR channel IN ('web', 'store', 'marketplace'))
ORDER BY month
