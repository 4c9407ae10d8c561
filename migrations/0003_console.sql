-- The data team's console (docs/admin.md): who ran each query, the data-issue inbox's status and its history,
-- and each webhook delivery attempt of a filed report.

-- query_log: org_id is the caller's org (principal.orgId), so a run refused before it reached a brand (brand_id
-- NULL) is still shown to that org's administrators; NULL for a caller spanning orgs and for rows logged before
-- this column. user_id is the acting user of an OAuth connection (principal_id holds the connection's grant id);
-- NULL for API keys.
ALTER TABLE query_log ADD COLUMN org_id TEXT;
ALTER TABLE query_log ADD COLUMN user_id TEXT;
CREATE INDEX IF NOT EXISTS query_log_brand ON query_log(brand_id, created_at);
CREATE INDEX IF NOT EXISTS query_log_request ON query_log(request_id);

-- feedback: user_id as for query_log. status moves open -> acknowledged -> resolved | dismissed (or straight from
-- open to resolved or dismissed); status_* say who made the last change (a display name: the user's email, or the
-- admin CLI), when, and the note they gave. Every change is also a feedback_status_changes row.
ALTER TABLE feedback ADD COLUMN user_id TEXT;
ALTER TABLE feedback ADD COLUMN status TEXT NOT NULL DEFAULT 'open'
  CHECK (status IN ('open', 'acknowledged', 'resolved', 'dismissed'));
ALTER TABLE feedback ADD COLUMN status_note TEXT;
ALTER TABLE feedback ADD COLUMN status_changed_by TEXT;
ALTER TABLE feedback ADD COLUMN status_changed_at INTEGER;
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
  created_at   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS feedback_status_changes_feedback ON feedback_status_changes(feedback_id, created_at);

-- webhook_deliveries: one row per attempt to call the configured webhook about a filed report (the Queues
-- consumer, src/features/notifications). outcome delivered (2xx), failed (will be retried) or gave_up (the last
-- attempt failed: nothing further is tried). http_status NULL when no answer came; error is a short reason.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id           TEXT PRIMARY KEY,           -- whd_<random>
  feedback_id  TEXT NOT NULL,
  attempt      INTEGER NOT NULL,           -- 1 for the first delivery
  outcome      TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed', 'gave_up')),
  http_status  INTEGER,
  error        TEXT,
  duration_ms  INTEGER NOT NULL,
  created_at   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_feedback ON webhook_deliveries(feedback_id, attempt);
