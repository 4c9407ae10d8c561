SELECT event_name, ARRAY_LENGTH(ARRAY_AGG(DISTINCT customer_id IGNORE NULLS)) AS known_visitors
FROM `service-v1.umbrella.raw__web_events`
GROUP BY event_name
ORDER BY event_name
