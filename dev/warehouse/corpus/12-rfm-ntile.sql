WITH rfm AS (
  SELECT customer_id,
    DATE_DIFF(CURRENT_DATE(), MAX(order_date), DAY) AS recency_days,
    COUNT(*) AS frequency,
    SUM(revenue) AS monetary
  FROM `service-v1.acme.fact__orders`
  GROUP BY customer_id
)
SELECT customer_id, recency_days, frequency, ROUND(monetary, 2) AS monetary,
  NTILE(5) OVER (ORDER BY recency_days DESC) AS r_score,
  NTILE(5) OVER (ORDER BY frequency) AS f_score,
  NTILE(5) OVER (ORDER BY monetary) AS m_score
FROM rfm
ORDER BY monetary DESC
LIMIT 100
