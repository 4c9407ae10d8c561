-- Sign-in lockout per account AND source: a lock taken by wrong passwords from one source (an IPv4 address, or
-- an IPv6 /64) applies to that source only, so someone elsewhere who knows an administrator's email cannot lock
-- the real person out. users.failed_logins and users.locked_until are no longer read or written by the Worker.
CREATE TABLE IF NOT EXISTS login_account_failures (
  user_id       TEXT NOT NULL,
  source_hash   TEXT NOT NULL,
  failures      INTEGER NOT NULL,
  locked_until  INTEGER,
  updated_at    INTEGER NOT NULL,
  PRIMARY KEY (user_id, source_hash)
);
CREATE INDEX IF NOT EXISTS login_account_failures_updated ON login_account_failures(updated_at);
