SELECT LOWER(TRIM(REPLACE(page, '/search?q=', ''))) AS term, COUNT(*) AS searches,
  STARTS_WITH(page, '/search') AS is_search
FROM `service-v1.globex.raw__web_events`
WHERE event_name = 'search'
GROUP BY term, is_search
ORDER BY searches DESC
