/**
 * A table of a brand's dataset as the warehouse names it: letters, digits and underscores, not starting with a
 * digit (e.g. `fact__orders`), at most 128 characters. Unqualified: the dataset is the brand's, so
 * `service-v1.<dataset>.<table>` is not a table name. The one statement of this rule (memories' `table`,
 * describe_table's path, search's table ids).
 */
export const TABLE_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Longest table name accepted. */
export const MAX_TABLE_NAME_CHARS = 128;

export function isTableName(s: string): boolean {
  return s.length <= MAX_TABLE_NAME_CHARS && TABLE_NAME_RE.test(s);
}
