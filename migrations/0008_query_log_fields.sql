-- query_log: optional fields several features fill (each NULL for rows written before this migration, and for rows
-- queued by a Worker deployed before it: the queue's row schema has them optional, so such rows still parse).
-- error_message: the caller-facing message of a refused or failed run (bounded, never internal detail), so the
--   history says why ("Unrecognized name: order_total"), not only the code.
-- client_name: the assistant (OAuth client) a connection's run came from, as the Assistants page names it; NULL for
--   API keys.
-- bq_job_id / bq_location / bq_query_id: BigQuery's own ids of the execution (the job, its location, or the
--   job-less run's queryId), so a run can be reconciled with the GCP bill.
-- async_job_id: the handle of a long (asynchronous) run, when the run was one.
ALTER TABLE query_log ADD COLUMN error_message TEXT;
ALTER TABLE query_log ADD COLUMN client_name TEXT;
ALTER TABLE query_log ADD COLUMN bq_job_id TEXT;
ALTER TABLE query_log ADD COLUMN bq_location TEXT;
ALTER TABLE query_log ADD COLUMN bq_query_id TEXT;
ALTER TABLE query_log ADD COLUMN async_job_id TEXT;
