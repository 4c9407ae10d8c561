-- D1 schema: the readable snapshot of what migrations/ produces, with each table's storage document. It is not
-- applied anywhere: databases are built and upgraded by the numbered files in migrations/ (`wrangler d1
-- migrations apply`; npm run dev, the tests and deploy all do). A change is a new migration plus the same change
-- here; test/node/schema-snapshot.test.mjs holds the two equal (tables, columns, types, defaults, keys, indexes).
-- Timestamps are integer milliseconds since the Unix epoch (UTC). JSON columns hold JSON text.
-- Each table's comment is its storage document: what one row means and who writes it.

-- organizations: a customer. Owns brands; an org-scoped API key reaches every brand in it.
-- Written by the admin CLI (`org create`) and the demo seed.
CREATE TABLE IF NOT EXISTS organizations (
  id          TEXT PRIMARY KEY,            -- e.g. org_demo
  name        TEXT NOT NULL,
  created_at  INTEGER NOT NULL
);

-- brands: one brand of an organization, with its BigQuery dataset in project service-v1.
-- dataset is NULL until the brand is provisioned; queries against such a brand are refused.
-- timezone (IANA name) decides what "yesterday" and "last full month" mean for stored-query periods; NULL = UTC.
-- currency (ISO 4217 code) is what the brand's money columns are in; NULL = not recorded.
CREATE TABLE IF NOT EXISTS brands (
  id          TEXT PRIMARY KEY,            -- e.g. brand_acme
  org_id      TEXT NOT NULL REFERENCES organizations(id),
  name        TEXT,
  dataset     TEXT UNIQUE,
  timezone    TEXT,
  created_at  INTEGER NOT NULL,
  currency    TEXT
);
CREATE INDEX IF NOT EXISTS brands_org ON brands(org_id);

-- api_keys: a bearer secret scoped to exactly one org or exactly one brand. Only the SHA-256 hex digest
-- of the secret is stored; prefix is the visible head of the secret (shown in lists, never enough to use).
-- revoked_at set = the key is dead at once (auth reads this row on every request).
-- The per-key settings (src/features/keys/settings.ts) override the Worker's DEFAULT_* variables when not NULL:
-- three run limits, and the per-minute rates of the light meters (docs/usage-limits.md). memories_write = 1: the
-- key may create, change and delete memories inside its own scope (an org key: org memories of its org and brand
-- memories of its brands; a brand key: its brand's); 0 = read-only. Written by the admin pages and CLI.
CREATE TABLE IF NOT EXISTS api_keys (
  id                  TEXT PRIMARY KEY,    -- key_<random>; public, used to revoke
  name                TEXT NOT NULL,
  prefix              TEXT NOT NULL,
  secret_hash         TEXT NOT NULL UNIQUE,
  org_id              TEXT REFERENCES organizations(id),
  brand_id            TEXT REFERENCES brands(id),
  max_bytes_billed    INTEGER,             -- per-query byte-scan ceiling
  daily_query_limit   INTEGER,             -- query runs per rolling 24 h
  daily_bytes_limit   INTEGER,             -- bytes billed per rolling 24 h
  created_by_user_id  TEXT,
  created_at          INTEGER NOT NULL,
  last_used_at        INTEGER,
  revoked_at          INTEGER,
  -- added by migration 0002 (columns a migration adds come last)
  checks_per_minute   INTEGER CHECK (checks_per_minute IS NULL OR checks_per_minute > 0),  -- dry runs + refusals
  page_reads_per_minute INTEGER CHECK (page_reads_per_minute IS NULL OR page_reads_per_minute > 0),  -- cursor pages
  memories_write      INTEGER NOT NULL DEFAULT 0 CHECK (memories_write IN (0, 1)),
  -- added by migration 0012: long runs at once, and the longest a job may run (jobTimeoutMs)
  max_running_jobs    INTEGER CHECK (max_running_jobs IS NULL OR max_running_jobs > 0),
  job_timeout_ms      INTEGER CHECK (job_timeout_ms IS NULL OR job_timeout_ms > 0),
  CHECK ((org_id IS NULL) <> (brand_id IS NULL))
);

-- reports: a dashboard-style report made of ordered queries (report_queries).
-- type system: global, shown once per brand, run against each brand's own dataset (org_id, brand_id NULL).
-- type org: shared inside org_id, shown once per brand of that org. type brand: owned by brand_id.
CREATE TABLE IF NOT EXISTS reports (
  id                TEXT PRIMARY KEY,
  type              TEXT NOT NULL CHECK (type IN ('system', 'org', 'brand')),
  org_id            TEXT REFERENCES organizations(id),
  brand_id          TEXT REFERENCES brands(id),
  name              TEXT NOT NULL,
  description       TEXT,
  instructions      TEXT,                  -- markdown
  dashboard_config  TEXT,                  -- JSON or NULL
  created_at        INTEGER NOT NULL,
  CHECK ((type = 'system' AND org_id IS NULL AND brand_id IS NULL)
      OR (type = 'org' AND org_id IS NOT NULL AND brand_id IS NULL)
      OR (type = 'brand' AND brand_id IS NOT NULL))
);

-- report_queries: one section of a report. sql_template holds {slot} placeholders ({dataset},
-- {start_date}, {end_date}) that the server fills with validated literals at run time. The server derives a
-- section's slots from sql_template alone (src/stored-queries); parameters, the JSON array of those slot
-- names written when a section is stored, is kept for databases that already have the column and never read.
CREATE TABLE IF NOT EXISTS report_queries (
  id               TEXT PRIMARY KEY,       -- the queryId callers send
  report_id        TEXT NOT NULL REFERENCES reports(id),
  ordinal          INTEGER NOT NULL,
  name             TEXT,
  description      TEXT,
  sql_template     TEXT NOT NULL,
  parameters       TEXT NOT NULL,          -- JSON array of slot names
  narrative_hints  TEXT,
  chart_spec       TEXT,                   -- JSON or NULL
  UNIQUE (report_id, ordinal)
);

-- saved_queries: a brand's standalone, concrete query (no slots), runnable by id as written.
CREATE TABLE IF NOT EXISTS saved_queries (
  id           TEXT PRIMARY KEY,
  brand_id     TEXT NOT NULL REFERENCES brands(id),
  name         TEXT,
  description  TEXT,
  sql          TEXT NOT NULL,
  tables       TEXT,                       -- JSON array of source tables, or NULL when unknown
  created_at   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS saved_queries_brand ON saved_queries(brand_id);

-- query_log: one row per query run, accepted or rejected (the audit trail; feedback attaches from it).
-- principal_kind/principal_id: 'key' + api_keys.id, or 'oauth' + the OAuth connection's grant id.
-- outcome is 'OK' or the error code returned. sql is the raw SQL (shape A) or the filled template (shape B).
-- org_id and brand_id are the row's owner (rowOwner, src/auth/ownership.ts): brand_id only once the brand check
-- passed, org_id that brand's org, else the caller's org (so a run refused before it reached a brand shows to that
-- org's administrators; NULL for a caller spanning orgs refused before naming a brand); an administrator sees a
-- brand's row only while org_id is the brand's current org (visibleSql); user_id the acting user of an OAuth connection,
-- NULL for API keys. The admin pages' query history and `npm run admin -- history` read this table.
CREATE TABLE IF NOT EXISTS query_log (
  id               TEXT PRIMARY KEY,
  request_id       TEXT NOT NULL,
  principal_kind   TEXT NOT NULL,
  principal_id     TEXT NOT NULL,
  brand_id         TEXT,
  query_id         TEXT,
  period           TEXT,                   -- JSON {startDate, endDate} or NULL
  sql              TEXT,
  dry_run          INTEGER NOT NULL DEFAULT 0,
  transport        TEXT NOT NULL DEFAULT 'rest',   -- rest | mcp
  outcome          TEXT NOT NULL,
  bytes_processed  INTEGER,
  bytes_billed     INTEGER,
  row_count        INTEGER,
  duration_ms      INTEGER,
  created_at       INTEGER NOT NULL,
  org_id           TEXT,
  user_id          TEXT,
  error_message    TEXT,                   -- the caller-facing message of a refused or failed run (0008)
  client_name      TEXT,                   -- the assistant (OAuth client) of a connection's run (0008)
  bq_job_id        TEXT,                   -- BigQuery's job id, location and queryId of the execution (0008)
  bq_location      TEXT,
  bq_query_id      TEXT,
  async_job_id     TEXT                    -- the long (asynchronous) run's handle, when it was one (0008)
);
CREATE INDEX IF NOT EXISTS query_log_principal ON query_log(principal_kind, principal_id, created_at);
CREATE INDEX IF NOT EXISTS query_log_brand ON query_log(brand_id, created_at);
CREATE INDEX IF NOT EXISTS query_log_request ON query_log(request_id);
CREATE INDEX IF NOT EXISTS query_log_created ON query_log(created_at, id);  -- the retention pass's oldest-first batches (0013)

-- feedback: a data-issue report filed by a caller. recent_queries is a JSON snapshot of that principal's last
-- 20 query_log rows from the 24 h before filing. id is the feedbackRef returned to the caller. user_id as for
-- query_log. status moves open -> acknowledged -> resolved | dismissed (or straight from open to resolved or
-- dismissed; resolved and dismissed are final); status_* say who made the last change (a display name), when, and
-- the note they gave; every change is also a feedback_status_changes row. The admin pages' inbox and
-- `npm run admin -- feedback` read and change it.
CREATE TABLE IF NOT EXISTS feedback (
  id              TEXT PRIMARY KEY,        -- fb_<random>
  request_id      TEXT NOT NULL,
  principal_kind  TEXT NOT NULL,
  principal_id    TEXT NOT NULL,
  org_id          TEXT,
  brand_id        TEXT,
  summary         TEXT NOT NULL,
  expected        TEXT,
  observed        TEXT,
  severity        TEXT CHECK (severity IS NULL OR severity IN ('low', 'medium', 'high')),
  transcript      TEXT,                    -- JSON array of {role, content} or NULL
  recent_queries  TEXT NOT NULL,           -- JSON array
  created_at      INTEGER NOT NULL,
  user_id         TEXT,
  status          TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'acknowledged', 'resolved', 'dismissed')),
  status_note     TEXT,
  status_changed_by TEXT,
  status_changed_at INTEGER,
  assignee_user_id TEXT                    -- the administrator the report is assigned to (users.id) (0011)
);
CREATE INDEX IF NOT EXISTS feedback_brand ON feedback(brand_id, created_at);
CREATE INDEX IF NOT EXISTS feedback_org ON feedback(org_id, created_at);

-- feedback_status_changes: one row per status change of a report, written in the same transaction as the change
-- (src/features/feedback-inbox). actor_kind user (actor_id = users.id) or cli (actor_id NULL).
CREATE TABLE IF NOT EXISTS feedback_status_changes (
  id           TEXT PRIMARY KEY,           -- fsc_<random>
  feedback_id  TEXT NOT NULL REFERENCES feedback(id),
  from_status  TEXT NOT NULL,
  to_status    TEXT NOT NULL,
  note         TEXT,
  actor_kind   TEXT NOT NULL CHECK (actor_kind IN ('user', 'cli')),
  actor_id     TEXT,
  actor_name   TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  kind         TEXT NOT NULL DEFAULT 'status' CHECK (kind IN ('status', 'note', 'assign'))  -- (0011) note, assign: from = to
);
CREATE INDEX IF NOT EXISTS feedback_status_changes_feedback ON feedback_status_changes(feedback_id, created_at);

-- webhook_deliveries: one row per attempt to call the configured webhook about a filed report (the Queues consumer,
-- src/features/notifications). outcome delivered (2xx), failed (will be retried) or gave_up (the last attempt
-- failed: nothing further is tried). http_status NULL when no answer came; error is a short redacted reason ("HTTP
-- 500", "invalid webhook URL", "DNS failure"), never a URL. event_id names what was notified (the report's id for
-- feedback.filed, the status change's id for feedback.status_changed); an event with a delivered or gave_up row is
-- never called again (0011).
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id           TEXT PRIMARY KEY,           -- whd_<random>
  feedback_id  TEXT NOT NULL,
  attempt      INTEGER NOT NULL,           -- 1 for the first delivery
  outcome      TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed', 'gave_up')),
  http_status  INTEGER,
  error        TEXT,
  duration_ms  INTEGER NOT NULL,
  created_at   INTEGER NOT NULL,
  event_id     TEXT,
  event        TEXT                        -- feedback.filed | feedback.status_changed
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_feedback ON webhook_deliveries(feedback_id, attempt);
CREATE INDEX IF NOT EXISTS webhook_deliveries_event ON webhook_deliveries(event_id, outcome);

-- org_webhooks: an organization's own notification webhook, overriding FEEDBACK_WEBHOOK_URL for its reports. The
-- URL and the signing secret are sealed (AES-256-GCM under CREDENTIALS_KEY, src/warehouse/credential-seal.ts, the
-- org id as authenticated data) and never displayed. key_id names the secret that sealed the row (0011).
CREATE TABLE IF NOT EXISTS org_webhooks (
  org_id         TEXT PRIMARY KEY,
  format         TEXT NOT NULL DEFAULT 'json' CHECK (format IN ('json', 'slack')),
  key_id         TEXT NOT NULL,
  sealed         TEXT NOT NULL,              -- JSON {iv, ciphertext} of the sealed JSON {url, secret}
  updated_by     TEXT NOT NULL,
  updated_at     INTEGER NOT NULL
);

-- users: people who sign in to the administration interface and approve OAuth connections.
-- password_hash is PBKDF2-SHA256 (hex) over the password with the per-user salt and password_iterations.
-- failed_logins / locked_until: unused since migration 0006 (the lockout is per account and source, login_account_failures).
CREATE TABLE IF NOT EXISTS users (
  id                   TEXT PRIMARY KEY,
  email                TEXT NOT NULL UNIQUE COLLATE NOCASE,
  name                 TEXT,
  password_hash        TEXT NOT NULL,
  password_salt        TEXT NOT NULL,
  password_iterations  INTEGER NOT NULL,
  failed_logins        INTEGER NOT NULL DEFAULT 0,
  locked_until         INTEGER,
  created_at           INTEGER NOT NULL
);

-- login_ip_failures: the per-IP sign-in throttle (docs/admin.md): sign-in attempts counted from one address in one
-- 15-minute window, across all accounts, so password spraying from one address is slowed. ip_hash is the SHA-256
-- hex of CF-Connecting-IP, window_start the window's first millisecond. An attempt takes a slot with one atomic
-- upsert before its password is checked (src/web/sign-in.ts), so concurrent attempts cannot share a slot, and gives
-- it back when the password was right or the account was locked (nothing checked). Past windows are deleted by
-- later sign-ins.
CREATE TABLE IF NOT EXISTS login_ip_failures (
  ip_hash       TEXT NOT NULL,
  window_start  INTEGER NOT NULL,
  failures      INTEGER NOT NULL,
  PRIMARY KEY (ip_hash, window_start)
);

-- login_account_failures: the per-account sign-in lockout, kept per source (docs/admin.md, src/web/sign-in.ts).
-- One row per user and source (source_hash: SHA-256 hex of an IPv4 address, or of an IPv6 /64 prefix) with the
-- consecutive failed passwords from that source and, from the 5th, the time until which that source may not sign in
-- to that account (15 minutes, doubling with each further failure, at most a day). A lock elsewhere never stops
-- another source. An attempt counts itself with one atomic upsert before its password is checked; a right password
-- deletes the row. Rows idle for a day are deleted by later sign-ins. (users.failed_logins and users.locked_until
-- held an account-wide lock before migration 0006 and are no longer used.)
CREATE TABLE IF NOT EXISTS login_account_failures (
  user_id       TEXT NOT NULL,
  source_hash   TEXT NOT NULL,
  failures      INTEGER NOT NULL,
  locked_until  INTEGER,
  updated_at    INTEGER NOT NULL,
  PRIMARY KEY (user_id, source_hash)
);
CREATE INDEX IF NOT EXISTS login_account_failures_updated ON login_account_failures(updated_at);

-- memberships: a user is administrator of a whole org (org_id set) or of one brand (brand_id set).
-- Deleting the row removes admin rights at once (OAuth connections re-check it on every request).
CREATE TABLE IF NOT EXISTS memberships (
  user_id     TEXT NOT NULL REFERENCES users(id),
  org_id      TEXT REFERENCES organizations(id),
  brand_id    TEXT REFERENCES brands(id),
  role        TEXT NOT NULL DEFAULT 'admin' CHECK (role IN ('admin')),
  created_at  INTEGER NOT NULL,
  CHECK ((org_id IS NULL) <> (brand_id IS NULL))
);
CREATE UNIQUE INDEX IF NOT EXISTS memberships_unique ON memberships(user_id, COALESCE(org_id, ''), COALESCE(brand_id, ''));

-- memories: context about what a table means and how to analyze it (docs/memories.md). Visibility is the reports'
-- rule: scope system reaches every brand (org_id, brand_id NULL), org every brand of org_id, brand its brand_id.
-- table_name is a table of the brand's dataset the note is about, or NULL for general context. content is markdown
-- (at most 8 KB of UTF-8). Written through src/operations/memories.ts (REST, MCP, admin pages) and the admin CLI;
-- author_* is who created the row, updated_by_* who last changed it (kind key | user | cli | seed; id is the key or
-- user id, NULL for cli and seed; name is a display name, never a secret). deleted_at set = deleted: invisible to
-- every caller, restorable from the admin pages. Every write also appends a memory_revisions row.
CREATE TABLE IF NOT EXISTS memories (
  id               TEXT PRIMARY KEY,       -- mem_<random>
  scope            TEXT NOT NULL CHECK (scope IN ('system', 'org', 'brand')),
  org_id           TEXT REFERENCES organizations(id),
  brand_id         TEXT REFERENCES brands(id),
  table_name       TEXT,
  title            TEXT NOT NULL,
  content          TEXT NOT NULL,
  author_kind      TEXT NOT NULL CHECK (author_kind IN ('key', 'user', 'cli', 'seed')),
  author_id        TEXT,
  author_name      TEXT NOT NULL,
  updated_by_kind  TEXT NOT NULL CHECK (updated_by_kind IN ('key', 'user', 'cli', 'seed')),
  updated_by_id    TEXT,
  updated_by_name  TEXT NOT NULL,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  deleted_at       INTEGER,
  CHECK ((scope = 'system' AND org_id IS NULL AND brand_id IS NULL)
      OR (scope = 'org' AND org_id IS NOT NULL AND brand_id IS NULL)
      OR (scope = 'brand' AND org_id IS NULL AND brand_id IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS memories_brand ON memories(brand_id, deleted_at);
CREATE INDEX IF NOT EXISTS memories_org ON memories(org_id, deleted_at);

-- memory_revisions: the audit trail of memories, one row per write, never updated or deleted. action is create,
-- update, delete or restore; before_json is the memory as it was (JSON {title, table, content, deletedAt}; NULL for
-- create), after_json as it became (NULL for delete). actor_* as memories.author_*; transport says where the write came
-- from (rest, mcp, admin, cli, seed). A deleted memory is restored from its last row.
CREATE TABLE IF NOT EXISTS memory_revisions (
  id          TEXT PRIMARY KEY,            -- mrev_<random>
  memory_id   TEXT NOT NULL REFERENCES memories(id),
  action      TEXT NOT NULL CHECK (action IN ('create', 'update', 'delete', 'restore')),
  before_json TEXT,
  after_json  TEXT,
  actor_kind  TEXT NOT NULL CHECK (actor_kind IN ('key', 'user', 'cli', 'seed')),
  actor_id    TEXT,
  actor_name  TEXT NOT NULL,
  transport   TEXT NOT NULL,
  request_id  TEXT,
  created_at  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_revisions_memory ON memory_revisions(memory_id, created_at);

-- brand_credentials: the BigQuery service-account key a brand's queries are signed with, sealed (AES-256-GCM)
-- under the key-encryption secret CREDENTIALS_KEY (src/warehouse/credential-seal.ts). One row per brand that
-- has its own account; a brand without a row uses GCP_SERVICE_ACCOUNTS_BY_BRAND or GCP_SERVICE_ACCOUNT_JSON.
-- client_email and private_key_id are kept in clear so `brand credentials show` can name the account without
-- any secret; the private key exists only inside ciphertext. key_id names the secret that sealed the row (not
-- the secret): rows under an older key are re-sealed by `brand credentials re-encrypt`.
-- Written by the admin CLI (`brand credentials set|clear|re-encrypt`); read by the Worker per brand.
CREATE TABLE IF NOT EXISTS brand_credentials (
  brand_id        TEXT PRIMARY KEY REFERENCES brands(id) ON DELETE CASCADE,
  client_email    TEXT NOT NULL,
  private_key_id  TEXT NOT NULL,
  key_id          TEXT NOT NULL,             -- 16 hex digits derived from the sealing secret
  iv              TEXT NOT NULL,             -- base64, 12 bytes
  ciphertext      TEXT NOT NULL,             -- base64 of AES-GCM output (tag appended) of the key's JSON
  updated_at      INTEGER NOT NULL
);

-- catalog_versions: one row per catalog folder applied (`npm run admin -- catalog apply`, docs/catalog.md), and one
-- per demo catalog content the demo seed first added. content_hash is the sha256 of the folder's catalog as
-- canonical JSON (equal hashes = equal catalogs), plan_hash that of the plan applied (`catalog apply --expect`),
-- applied_by who (--author, else the OS user; "demo data" for the seed), source the folder as given, summary the
-- plan's counts, plan_json its entries. The live version is the newest row (admin pages show it, read-only).
-- Written in the same batch as the catalog change it records, so a row exists exactly when the change does.
CREATE TABLE IF NOT EXISTS catalog_versions (
  id            TEXT PRIMARY KEY,        -- cv_<random>
  content_hash  TEXT NOT NULL,
  plan_hash     TEXT NOT NULL,
  applied_by    TEXT NOT NULL,
  applied_at    INTEGER NOT NULL,
  source        TEXT,
  summary       TEXT NOT NULL,           -- e.g. "2 to add, 1 to change, 0 to remove"
  plan_json     TEXT NOT NULL            -- JSON array of the plan's entries
);
CREATE INDEX IF NOT EXISTS catalog_versions_applied ON catalog_versions(applied_at);

-- catalog_version_orgs: versions per organization (0009). One row per organization whose catalog a version changed
-- (an item owned by org:X changes X's, by brand:B B's org's, a system item every organization's), summary that
-- organization's part of the plan counted. The admin pages' Catalog page shows an administrator only the versions
-- of their organizations, with their part; the admin CLI reads catalog_versions whole.
CREATE TABLE IF NOT EXISTS catalog_version_orgs (
  version_id  TEXT NOT NULL REFERENCES catalog_versions(id),
  org_id      TEXT NOT NULL,
  summary     TEXT NOT NULL,
  PRIMARY KEY (version_id, org_id)
);
CREATE INDEX IF NOT EXISTS catalog_version_orgs_org ON catalog_version_orgs(org_id);

-- query_jobs: one row per long (asynchronous) query run: a REST async job, an MCP task, or a run_query that outlived
-- its wait and answered with a pending cursor. The durable record of the run (docs/run-query.md, "Long queries"),
-- read by whichever isolate serves the next poll, the job's alarm (QueryJobAlarm) and the console's Jobs page.
-- id is the handle callers see (qj_<random>); principal_kind/principal_id its owner (only the owner may read or cancel
-- it); bq_job_id/bq_location the BigQuery job, chosen before the job is sent so a lost answer cannot lose it.
-- status: running -> (done | failed) as BigQuery ends it; running -> cancelling (jobs.cancel sent, by the caller
-- or past deadline_at) -> cancelled | expired once BigQuery reports the job DONE. ticket_id/reserved_bytes: the usage
-- reservation taken at start, settled once (settled_at) to bytes_billed when the job ends, however it ends.
-- result_expires_at: the result's pages stay readable until then (the result cursor lifetime), then "result gone".
CREATE TABLE IF NOT EXISTS query_jobs (
  id                 TEXT PRIMARY KEY,
  principal_kind     TEXT NOT NULL,
  principal_id       TEXT NOT NULL,
  org_id             TEXT,
  user_id            TEXT,
  client_name        TEXT,                  -- the assistant of a connection's run, for its query_log row
  brand_id           TEXT NOT NULL,
  query_id           TEXT,
  period             TEXT,
  sql                TEXT NOT NULL,
  transport          TEXT NOT NULL,
  request_id         TEXT NOT NULL,
  bq_job_id          TEXT NOT NULL UNIQUE,
  bq_location        TEXT NOT NULL,
  status             TEXT NOT NULL CHECK (status IN ('running', 'cancelling', 'done', 'failed', 'cancelled', 'expired')),
  cancel_reason      TEXT CHECK (cancel_reason IS NULL OR cancel_reason IN ('caller', 'deadline')),
  ticket_id          TEXT,
  reserved_bytes     INTEGER NOT NULL,
  estimate_bytes     INTEGER NOT NULL,
  bytes_processed    INTEGER,
  bytes_billed       INTEGER,
  total_rows         INTEGER,
  error_code         TEXT,
  error_message      TEXT,
  created_at         INTEGER NOT NULL,
  deadline_at        INTEGER NOT NULL,
  ended_at           INTEGER,
  settled_at         INTEGER,
  result_expires_at  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS query_jobs_owner ON query_jobs(principal_kind, principal_id, status);
CREATE INDEX IF NOT EXISTS query_jobs_created ON query_jobs(created_at);
