SELECT channel, JSON_QUERY_ARRAY(TO_JSON_STRING(STRUCT([quantity, quantity * 2] AS q)), '$.q') AS doubled
FROM `service-v1.acme.fact__orders`
LIMIT 3
