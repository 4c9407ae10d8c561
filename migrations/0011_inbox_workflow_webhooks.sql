-- The inbox as a workflow and notifications a team can trust (issue 37, part B; issue 33's notification findings).
--
-- feedback.assignee_user_id: the administrator a report is assigned to (users.id), NULL when unassigned.
ALTER TABLE feedback ADD COLUMN assignee_user_id TEXT;
-- feedback_status_changes.kind: what a history row records. status: a change of status (from_status -> to_status);
-- note: a note without a change; assign: an assignment (the note says to whom). from_status = to_status for the
-- last two. The filer reads status and note rows (GET /v1/data/feedback/{feedbackRef}), never assign rows.
ALTER TABLE feedback_status_changes ADD COLUMN kind TEXT NOT NULL DEFAULT 'status' CHECK (kind IN ('status', 'note', 'assign'));

-- webhook_deliveries: one row per attempt per event. event_id names what was notified (the report's id for
-- `feedback.filed`, the feedback_status_changes id for `feedback.status_changed`); a message whose event already
-- has a `delivered` or `gave_up` row is acknowledged without calling again. Rows written before this migration
-- were all about filings.
ALTER TABLE webhook_deliveries ADD COLUMN event_id TEXT;
ALTER TABLE webhook_deliveries ADD COLUMN event TEXT;
UPDATE webhook_deliveries SET event_id = feedback_id, event = 'feedback.filed' WHERE event_id IS NULL;
-- A delivery error is a short redacted reason ("invalid webhook URL", "HTTP 500", "DNS failure"); older rows could
-- hold the raw fetch error, which may quote the webhook URL (a secret): keep only what is safe to show.
UPDATE webhook_deliveries SET error = 'delivery failed' WHERE error IS NOT NULL AND error NOT GLOB 'HTTP [0-9][0-9][0-9]';
CREATE INDEX IF NOT EXISTS webhook_deliveries_event ON webhook_deliveries(event_id, outcome);

-- org_webhooks: an organization's own notification webhook, overriding FEEDBACK_WEBHOOK_URL for its reports. The
-- URL and the signing secret are sealed (AES-256-GCM under CREDENTIALS_KEY, src/warehouse/credential-seal.ts, the
-- org id as authenticated data) and never displayed: the console shows only that one is set, its format, who set it
-- and when. key_id names the secret that sealed the row. Written and read by the Worker (the Data issues page).
CREATE TABLE IF NOT EXISTS org_webhooks (
  org_id         TEXT PRIMARY KEY,
  format         TEXT NOT NULL DEFAULT 'json' CHECK (format IN ('json', 'slack')),
  key_id         TEXT NOT NULL,
  sealed         TEXT NOT NULL,              -- JSON {iv, ciphertext} of the sealed JSON {url, secret}
  updated_by     TEXT NOT NULL,              -- the administrator's email
  updated_at     INTEGER NOT NULL
);
