SELECT TIMESTAMP_TRUNC(event_ts, HOUR) AS hour,
  COUNT(*) AS events,
  MAX(TIMESTAMP_DIFF(CURRENT_TIMESTAMP(), event_ts, MINUTE)) AS oldest_minutes_ago
FROM `service-v1.globex.raw__web_events`
WHERE event_ts >= TIMESTAMP(DATE_SUB(CURRENT_DATE(), INTERVAL 2 DAY))
GROUP BY hour
ORDER BY hour
