SELECT CONCAT(country, '-', segment) AS bucket,
  FORMAT('%d customers', COUNT(*)) AS label,
  LPAD(CAST(COUNT(*) AS STRING), 8, '0') AS padded,
  UPPER(segment) AS seg
FROM `service-v1.umbrella.dim__customers`
GROUP BY country, segment
ORDER BY bucket
