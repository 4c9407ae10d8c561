SELECT REGEXP_EXTRACT(page, r'^/products/(P\d+)$') AS product_id,
  SPLIT(page, '/')[SAFE_OFFSET(1)] AS section,
  COUNT(*) AS views
FROM `service-v1.acme.raw__web_events`
WHERE event_name = 'page_view' AND REGEXP_CONTAINS(page, r'^/products/')
GROUP BY product_id, section
ORDER BY views DESC
LIMIT 10
