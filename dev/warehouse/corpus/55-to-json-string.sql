SELECT TO_JSON_STRING(STRUCT(month, orders, revenue)) AS row_json
FROM `service-v1.globex.report__monthly_kpis`
ORDER BY month
LIMIT 3
