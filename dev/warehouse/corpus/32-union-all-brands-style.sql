SELECT 'web' AS source, COUNT(*) AS n FROM `service-v1.acme.fact__orders` WHERE channel = 'web'
UNION ALL
SELECT 'events', COUNT(*) FROM `service-v1.acme.raw__web_events` WHERE event_name = 'purchase'
