SELECT channel,
  ROUND(STDDEV(revenue), 2) AS sd_revenue,
  ROUND(CORR(quantity, revenue), 4) AS corr_qty_revenue,
  ROUND(VARIANCE(quantity), 4) AS var_qty
FROM `service-v1.acme.fact__orders`
GROUP BY channel
ORDER BY channel
