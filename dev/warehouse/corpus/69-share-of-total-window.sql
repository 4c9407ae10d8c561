SELECT channel, SUM(revenue) AS revenue,
  SUM(revenue) / SUM(SUM(revenue)) OVER () AS share,
  PERCENT_RANK() OVER (ORDER BY SUM(revenue)) AS pct_rank,
  CUME_DIST() OVER (ORDER BY SUM(revenue)) AS cume
FROM `service-v1.acme.fact__orders`
GROUP BY channel
ORDER BY revenue DESC
