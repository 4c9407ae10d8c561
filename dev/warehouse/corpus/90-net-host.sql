SELECT NET.HOST(CONCAT('https://shop.example.com', page)) AS host, COUNT(*) AS events
FROM `service-v1.acme.raw__web_events`
GROUP BY host
