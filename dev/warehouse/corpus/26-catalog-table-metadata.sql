SELECT table_name, layer, data_source
FROM `service-v1.acme.table_metadata`
ORDER BY table_name
