SELECT DISTINCT REGEXP_REPLACE(page, r'P\d{4}', 'P####') AS page_pattern
FROM `service-v1.globex.raw__web_events`
ORDER BY page_pattern
