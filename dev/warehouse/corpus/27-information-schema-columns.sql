SELECT column_name, data_type
FROM `service-v1.acme.INFORMATION_SCHEMA.COLUMNS`
WHERE table_name = 'fact__orders'
ORDER BY ordinal_position
