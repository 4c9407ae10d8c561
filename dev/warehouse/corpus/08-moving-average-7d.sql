SELECT day,
  AVG(SUM(revenue)) OVER (ORDER BY day ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) AS revenue_7d_avg
FROM `service-v1.acme.agg__daily_revenue`
GROUP BY day
ORDER BY day DESC
LIMIT 30
