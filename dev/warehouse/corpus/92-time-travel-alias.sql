-- The customers table as of its creation today
SELECT c.segment, COUNT(*) AS customers
FROM `service-v1.acme.dim__customers` AS c FOR SYSTEM_TIME AS OF TIMESTAMP(CURRENT_DATE())
GROUP BY c.segment
