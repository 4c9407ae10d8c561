SELECT COUNT(*) > 0 AS sampled
FROM `service-v1.acme.fact__orders` TABLESAMPLE SYSTEM (1 PERCENT)
