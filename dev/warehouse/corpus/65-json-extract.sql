SELECT JSON_EXTRACT_SCALAR(j, '$.channel') AS channel, CAST(JSON_EXTRACT_SCALAR(j, '$.orders') AS INT64) AS orders
FROM (
  SELECT TO_JSON_STRING(STRUCT(channel, COUNT(*) AS orders)) AS j
  FROM `service-v1.umbrella.fact__orders`
  GROUP BY channel
)
ORDER BY channel
