SELECT
  COUNTIF(event_name = 'page_view') AS views,
  COUNTIF(event_name = 'add_to_cart') AS carts,
  COUNTIF(event_name = 'begin_checkout') AS checkouts,
  COUNTIF(event_name = 'purchase') AS purchases,
  SAFE_DIVIDE(COUNTIF(event_name = 'purchase'), COUNTIF(event_name = 'page_view')) AS conversion
FROM `service-v1.acme.raw__web_events`
WHERE DATE(event_ts) >= DATE_SUB(CURRENT_DATE(), INTERVAL 28 DAY)
