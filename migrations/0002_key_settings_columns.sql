-- Per-key settings become columns of api_keys. The side tables api_key_meters (meter rates, which had no writer)
-- and api_key_permissions (memories:write) existed only because a create-only schema could not add a column.
-- Each setting is a column, NULL (or 0 for the flag) meaning the Worker's default; what each means is in
-- src/features/keys/settings.ts, the one list the Worker, the admin pages and the admin CLI read.
ALTER TABLE api_keys ADD COLUMN checks_per_minute INTEGER CHECK (checks_per_minute IS NULL OR checks_per_minute > 0);
ALTER TABLE api_keys ADD COLUMN page_reads_per_minute INTEGER CHECK (page_reads_per_minute IS NULL OR page_reads_per_minute > 0);
ALTER TABLE api_keys ADD COLUMN memories_write INTEGER NOT NULL DEFAULT 0 CHECK (memories_write IN (0, 1));

UPDATE api_keys SET
  checks_per_minute = (SELECT m.checks_per_minute FROM api_key_meters m WHERE m.key_id = api_keys.id),
  page_reads_per_minute = (SELECT m.page_reads_per_minute FROM api_key_meters m WHERE m.key_id = api_keys.id),
  memories_write = EXISTS (SELECT 1 FROM api_key_permissions p WHERE p.key_id = api_keys.id AND p.permission = 'memories:write');

DROP TABLE api_key_meters;
DROP TABLE api_key_permissions;
