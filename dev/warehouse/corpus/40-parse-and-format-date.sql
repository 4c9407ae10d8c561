SELECT PARSE_DATE('%Y%m%d', FORMAT_DATE('%Y%m%d', day)) = day AS round_trips,
  FORMAT_DATE('%b %d, %Y', day) AS pretty, FORMAT_DATE('%F', day) AS iso
FROM `service-v1.globex.agg__daily_revenue`
ORDER BY day
LIMIT 3
