-- catalog_versions: the record of catalog folders applied to this database (docs/catalog.md, "Catalog files").
CREATE TABLE IF NOT EXISTS catalog_versions (
  id            TEXT PRIMARY KEY,
  content_hash  TEXT NOT NULL,
  plan_hash     TEXT NOT NULL,
  applied_by    TEXT NOT NULL,
  applied_at    INTEGER NOT NULL,
  source        TEXT,
  summary       TEXT NOT NULL,
  plan_json     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS catalog_versions_applied ON catalog_versions(applied_at);
