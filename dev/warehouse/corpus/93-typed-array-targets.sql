-- Attainment against targets written inline as a typed array of structs
WITH targets AS (
  SELECT tg.channel, tg.target
  FROM UNNEST(ARRAY<STRUCT<channel STRING, target FLOAT64>>[('web', 5000000.0), ('store', 3000000.0), ('marketplace', 1000000.0)]) AS tg
)
SELECT o.channel, ROUND(SUM(o.revenue) / ANY_VALUE(t.target), 3) AS attainment
FROM `service-v1.acme.fact__orders` AS o
JOIN targets AS t USING (channel)
GROUP BY o.channel
