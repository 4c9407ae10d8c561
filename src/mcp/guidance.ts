/**
 * Text written for the model, shared by the server instructions and the tool descriptions so the rules are
 * stated the same way everywhere.
 */

export const TABLE_NAMING =
  'Reference every table fully qualified and in backticks as `service-v1.<dataset>.<table>`, where <dataset> is ' +
  "the brand's `dataset` from list_brands (e.g. `service-v1.acme.fact__orders`). Only that brand's dataset is reachable.";

export const TABLE_DISCOVERY =
  'There is no schema tool: discover tables with ' +
  "SELECT table_name, layer, data_source, description FROM `service-v1.<dataset>.table_metadata`, and a table's columns with " +
  "SELECT column_name, data_type FROM `service-v1.<dataset>.INFORMATION_SCHEMA.COLUMNS` WHERE table_name = '<table>'. " +
  'Tables starting with report__, fact__, dim__ or agg__ are the dashboard-ready marts; prefer them over raw__ tables.';

export const STATEMENT_RULE = 'Exactly one read-only statement, SELECT or WITH; anything else is rejected.';

export const PAGING =
  'Results are capped for assistants; when `truncated` is true, fetch the rest by re-running the SQL with ' +
  'ORDER BY on a unique key plus LIMIT n OFFSET m, or aggregate in SQL instead of pulling raw rows.';

export const FLOWS =
  'Flow A (raw SQL): list_brands -> take the brand\'s dataset -> run_query with `sql`. ' +
  'Flow B (stored queries): list_reports -> list_report_queries (or list_saved_queries) -> run_query with `queryId` ' +
  '(add `period` for parameterized ones). ' +
  'Flow C (feedback): when data looks wrong, report_data_issue; recent queries are attached automatically.';

export const BRAND_ID_INPUT =
  'Target brand id from list_brands. Required for organization-wide credentials when the tool needs one brand; ' +
  'omit it with single-brand credentials.';

export const READ_MEMORIES =
  'Before querying a table, read its memories with list_memories (brandId and table): what it means and how to analyze it.';
