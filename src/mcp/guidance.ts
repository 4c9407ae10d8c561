/**
 * Text written for the model. Each rule is stated once, in the server instructions (sent at `initialize` and
 * `server/discover`, read before any tool); tool descriptions say only what that tool needs.
 */

export const TABLE_NAMING =
  'Tables: always `service-v1.<dataset>.<table>` in backticks, <dataset> from list_brands; only that brand\'s dataset is reachable.';

export const TABLE_DISCOVERY =
  'List tables: SELECT table_name, layer, description FROM `service-v1.<dataset>.table_metadata`; columns: ' +
  "SELECT column_name, data_type FROM `service-v1.<dataset>.INFORMATION_SCHEMA.COLUMNS` WHERE table_name = '<table>'. " +
  'Prefer report__, fact__, dim__ and agg__ tables over raw__.';

export const STATEMENT_RULE = 'SQL: exactly one read-only statement, SELECT or WITH.';

export const PAGING =
  'Capped results (`truncated`) continue with run_query { `cursor`: nextCursor } alone: the next page of the same ' +
  'result, no new run, nothing billed. Or aggregate in SQL.';

export const FLOWS =
  'Flow A: list_brands -> run_query { sql }. ' +
  'Flow B: list_reports -> list_report_queries (or list_saved_queries) -> run_query { queryId, period? }. ' +
  'Flow C: data looks wrong -> report_data_issue.';

/** The brandId rule every tool with a `brandId` argument shares, said once in the instructions. */
export const BRAND_ID_RULE =
  'brandId: omit it with single-brand credentials; organization credentials pass one from list_brands when a tool needs one brand.';

export const READ_MEMORIES =
  'Before querying a table, read its memories with list_memories (brandId and table): what it means and how to analyze it.';
