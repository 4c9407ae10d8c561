-- query_log_created: the retention pass (src/features/query-history/retention.ts) takes the oldest rows past the
-- window, ordered by created_at then id, every hour; without this index each batch scans and sorts the whole log.
CREATE INDEX IF NOT EXISTS query_log_created ON query_log(created_at, id);
