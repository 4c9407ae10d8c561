SELECT event_name,
  COUNTIF(customer_id IS NULL) AS anonymous,
  COUNT(customer_id) AS known,
  ROUND(SAFE_DIVIDE(COUNTIF(customer_id IS NULL), COUNT(*)), 3) AS anonymous_share
FROM `service-v1.umbrella.raw__web_events`
GROUP BY event_name
ORDER BY event_name
