-- Ownership of stored rows, decided once (src/auth/ownership.ts; docs/architecture.md, "Ownership").
--
-- query_log / feedback: a row about a brand is shown to an administrator only when its org is that brand's current
-- org (visibleSql), and a row's org and brand come from rowOwner: the brand only once the brand check has passed, its
-- org the brand's. Rows written before this migration are brought to that rule:
-- - a run refused with FORBIDDEN_BRAND named a brand the caller could not reach: the brand was the request's, never
--   verified, so it is dropped; the row stays the caller's org's (it had been shown to the brand's administrators);
-- - a row with a brand and no org (an OAuth administrator whose brands spanned two orgs, or a row from before 0003)
--   takes the brand's org, as rowOwner now writes it.
UPDATE query_log SET brand_id = NULL WHERE outcome = 'FORBIDDEN_BRAND' AND brand_id IS NOT NULL;
UPDATE query_log SET org_id = (SELECT b.org_id FROM brands b WHERE b.id = query_log.brand_id)
  WHERE org_id IS NULL AND brand_id IS NOT NULL;
UPDATE feedback SET org_id = (SELECT b.org_id FROM brands b WHERE b.id = feedback.brand_id)
  WHERE org_id IS NULL AND brand_id IS NOT NULL;

-- catalog_version_orgs: versions per organization. A catalog version (catalog_versions) is recorded for each
-- organization whose catalog it changed (an item owned by org:X changes X's, by brand:B B's org's, a system item
-- every organization's), with that organization's part of the plan counted in summary ("1 to add, 0 to change, 0
-- to remove"). The admin pages' Catalog page shows an administrator only their organizations' versions, with their
-- part (src/features/catalog-files/versions.ts); the admin CLI (the operator) still reads catalog_versions whole.
CREATE TABLE IF NOT EXISTS catalog_version_orgs (
  version_id  TEXT NOT NULL REFERENCES catalog_versions(id),
  org_id      TEXT NOT NULL,
  summary     TEXT NOT NULL,
  PRIMARY KEY (version_id, org_id)
);
CREATE INDEX IF NOT EXISTS catalog_version_orgs_org ON catalog_version_orgs(org_id);

-- Versions recorded before this migration, from their plan_json: each applied entry's owner as the database holds
-- it now (an item since removed can no longer be placed, and counts nowhere). '*' stands for a system item.
WITH entries AS (
  SELECT v.id AS version_id, json_extract(j.value, '$.action') AS action, json_extract(j.value, '$.kind') AS kind,
         json_extract(j.value, '$.id') AS item, json_extract(j.value, '$.report') AS report
    FROM catalog_versions v, json_each(v.plan_json) j
   WHERE COALESCE(json_extract(j.value, '$.skipped'), 0) = 0
),
owned AS (
  SELECT e.version_id, e.action,
         CASE e.kind
           WHEN 'report' THEN (SELECT CASE r.type WHEN 'system' THEN '*' WHEN 'org' THEN r.org_id
                                      ELSE (SELECT b.org_id FROM brands b WHERE b.id = r.brand_id) END
                                 FROM reports r WHERE r.id = e.item)
           WHEN 'section' THEN (SELECT CASE r.type WHEN 'system' THEN '*' WHEN 'org' THEN r.org_id
                                       ELSE (SELECT b.org_id FROM brands b WHERE b.id = r.brand_id) END
                                  FROM reports r WHERE r.id = e.report)
           WHEN 'savedQuery' THEN (SELECT b.org_id FROM saved_queries s JOIN brands b ON b.id = s.brand_id WHERE s.id = e.item)
           WHEN 'memory' THEN (SELECT CASE m.scope WHEN 'system' THEN '*' WHEN 'org' THEN m.org_id
                                      ELSE (SELECT b.org_id FROM brands b WHERE b.id = m.brand_id) END
                                 FROM memories m WHERE m.id = e.item)
         END AS org
    FROM entries e
)
INSERT OR IGNORE INTO catalog_version_orgs (version_id, org_id, summary)
SELECT w.version_id, o.id,
       SUM(w.action = 'add') || ' to add, ' || SUM(w.action = 'change') || ' to change, ' || SUM(w.action = 'remove') || ' to remove'
  FROM owned w JOIN organizations o ON o.id = w.org OR w.org = '*'
 GROUP BY w.version_id, o.id;
