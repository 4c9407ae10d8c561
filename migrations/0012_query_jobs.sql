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

-- Two per-key settings of long runs (src/features/keys/settings.ts): how many may run at once, and the longest a
-- job may run (sent to BigQuery as jobTimeoutMs). NULL = the Worker's DEFAULT_MAX_RUNNING_JOBS / DEFAULT_JOB_TIMEOUT_MS.
ALTER TABLE api_keys ADD COLUMN max_running_jobs INTEGER CHECK (max_running_jobs IS NULL OR max_running_jobs > 0);
ALTER TABLE api_keys ADD COLUMN job_timeout_ms INTEGER CHECK (job_timeout_ms IS NULL OR job_timeout_ms > 0);
