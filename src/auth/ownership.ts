import type { Principal } from './principal';

/**
 * Ownership, decided once (docs/architecture.md, "Ownership"): whose a stored row is, and which rows an
 * administrator may see. Two rules, one function each, pure (no I/O): every writer of an audited row (query_log,
 * feedback) calls {@link rowOwner}; every reader for an administrator (history, its CSV, the per-caller and per-brand
 * totals, the inbox, the admin CLI's `history` and `feedback`) calls {@link visibleSql}.
 */

/** The org and brand a stored row belongs to. */
export interface RowOwner {
  orgId: string | null;
  brandId: string | null;
}

/**
 * The owner of a row written for `principal` (verified at the front door). `brand` is the brand the request's brand
 * check has accepted, with its org as the catalog holds it; pass `null` while no check has passed (a run refused
 * before it resolved one, an organization-wide report). The brand never comes from the request unchecked, so a
 * refused request is owned by the caller's own org; with a brand, the row's org is that brand's, so a principal whose
 * brands span several orgs (an OAuth administrator) still writes rows some organization owns.
 */
export function rowOwner(principal: Pick<Principal, 'orgId'>, brand: { id: string; orgId: string } | null): RowOwner {
  return brand === null ? { orgId: principal.orgId, brandId: null } : { orgId: brand.orgId, brandId: brand.id };
}

/** What one administrator may see: the orgs they administer as a whole, every brand they reach; `all` for the operator. */
export interface Visibility {
  /** Orgs administered as a whole. */
  orgIds: readonly string[];
  /** Every brand reachable (directly or through an org). */
  brandIds: readonly string[];
  /** Operator view (the admin CLI without --as: whoever holds the D1 database sees every row anyway). */
  all?: boolean;
}

/** What an administrator's reach (memberships) makes visible. */
export function visibilityOf(reach: { orgIds: readonly string[]; brands: readonly { id: string }[] }): Visibility {
  return { orgIds: reach.orgIds, brandIds: reach.brands.map((b) => b.id) };
}

/** Appends a bound value and returns its placeholder (`Params` of the history's statement builders). */
interface Binder {
  p(value: string): string;
}

/**
 * The condition "row `alias` is visible to `v`", for a table with `brand_id` and `org_id` columns (query_log,
 * feedback). A row about a brand is visible when the brand is one `v` reaches **and** the row's org is that brand's
 * current org: a brand deleted and re-created under the same id in another org inherits nothing, and a row whose org
 * and brand disagree is nobody's but the operator's. A row without a brand is visible to the administrators of its
 * org as a whole. Pure: SQL text and bound values only.
 */
export function visibleSql(alias: string, v: Visibility, params: Binder): string {
  if (v.all) return '1 = 1';
  const brands = params.p(JSON.stringify(v.brandIds));
  const orgs = params.p(JSON.stringify(v.orgIds));
  return `((${alias}.brand_id IS NOT NULL AND ${alias}.brand_id IN (SELECT value FROM json_each(${brands}))
        AND ${alias}.org_id = (SELECT owner.org_id FROM brands owner WHERE owner.id = ${alias}.brand_id))
      OR (${alias}.brand_id IS NULL AND ${alias}.org_id IN (SELECT value FROM json_each(${orgs}))))`;
}
