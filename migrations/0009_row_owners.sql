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
