SELECT COUNT(*) AS n, MIN(day) AS first_day, MAX(day) AS last_day
FROM service-v1.globex.agg__daily_revenue
