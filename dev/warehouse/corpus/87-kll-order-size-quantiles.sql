SELECT channel, KLL_QUANTILES.EXTRACT_INT64(KLL_QUANTILES.INIT_INT64(quantity), 4) AS quartiles
FROM `service-v1.acme.fact__orders`
GROUP BY channel
