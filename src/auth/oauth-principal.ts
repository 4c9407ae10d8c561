import { z } from 'zod';
import type { Env } from '../env';
import { ApiError } from '../errors';
import { defaultLimits } from './api-keys';
import type { Principal } from './principal';

/** One brand an administrator can reach, with its org. */
const ReachableBrandSchema = z.object({ id: z.string(), orgId: z.string(), name: z.string().nullable() });
export type ReachableBrand = z.infer<typeof ReachableBrandSchema>;

/**
 * What one user administers, read fresh from D1: their memberships and the brands those reach (an org
 * membership reaches every brand of the org, a brand membership that brand). `null` when the user does not exist.
 */
export interface AdminReach {
  userId: string;
  email: string;
  name: string | null;
  /** Orgs the user administers as a whole. */
  orgIds: string[];
  /** Brands the user administers directly (not through an org). */
  directBrandIds: string[];
  /** Every brand reachable, ordered by id. */
  brands: ReachableBrand[];
}

const ReachRow = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string().nullable(),
  memberships: z.string(),
  brands: z.string(),
});
const Memberships = z.array(z.object({ orgId: z.string().nullable(), brandId: z.string().nullable() }));
const Brands = z.array(ReachableBrandSchema);

/**
 * The one read of what a user administers: memberships and reachable brands in one statement, by user id, or by id
 * or email (`byEmailToo`, the admin CLI's `--as`). Read with {@link adminReachFromRow}.
 */
export function adminReachStatement(who: string, byEmailToo = false): { sql: string; params: (string | number)[] } {
  return {
    sql: `SELECT u.id, u.email, u.name,
            (SELECT json_group_array(json_object('orgId', m.org_id, 'brandId', m.brand_id))
               FROM memberships m WHERE m.user_id = u.id) AS memberships,
            (SELECT json_group_array(json_object('id', b.id, 'orgId', b.org_id, 'name', b.name))
               FROM (SELECT id, org_id, name FROM brands
                      WHERE org_id IN (SELECT org_id FROM memberships WHERE user_id = u.id AND org_id IS NOT NULL)
                         OR id IN (SELECT brand_id FROM memberships WHERE user_id = u.id AND brand_id IS NOT NULL)
                      ORDER BY id) b) AS brands
       FROM users u WHERE u.id = ?1 OR (?2 = 1 AND u.email = ?1 COLLATE NOCASE)`,
    params: [who, byEmailToo ? 1 : 0],
  };
}

/** A row of {@link adminReachStatement} as the reach it describes. */
export function adminReachFromRow(raw: unknown): AdminReach {
  const row = ReachRow.parse(raw);
  const memberships = Memberships.parse(JSON.parse(row.memberships));
  return {
    userId: row.id,
    email: row.email,
    name: row.name,
    orgIds: memberships.flatMap((m) => (m.orgId ? [m.orgId] : [])),
    directBrandIds: memberships.flatMap((m) => (m.brandId ? [m.brandId] : [])),
    brands: Brands.parse(JSON.parse(row.brands)),
  };
}

/** Reads a user's memberships and reachable brands in one D1 query. */
export async function loadAdminReach(env: Env, userId: string): Promise<AdminReach | null> {
  const s = adminReachStatement(userId);
  const raw = await env.DB.prepare(s.sql)
    .bind(...s.params)
    .first();
  return raw === null ? null : adminReachFromRow(raw);
}

/** True when the user administers anything at all (the condition for signing in and for OAuth access). */
export function isAdministrator(reach: AdminReach | null): reach is AdminReach {
  return reach !== null && reach.orgIds.length + reach.directBrandIds.length > 0;
}

/**
 * The principal of an OAuth connection, rebuilt from D1 on every request so that losing admin rights, or gaining
 * or losing a brand, takes effect at once. Throws 401 UNAUTHORIZED when the user is gone or administers nothing.
 * `grantId` becomes the principal id, so each connection has its own usage window.
 */
export async function oauthPrincipal(
  env: Env,
  grant: { grantId: string; userId: string; writes: NonNullable<Principal['writes']>; clientName?: string },
): Promise<Principal> {
  const reach = await loadAdminReach(env, grant.userId);
  if (!isAdministrator(reach)) {
    throw new ApiError('UNAUTHORIZED', 'this connection was approved by a user who is no longer an administrator; reconnect the assistant');
  }
  const principal = principalFromReach(env, grant.grantId, reach);
  const actorName = `${grant.clientName ?? 'Assistant'} for ${reach.email}`;
  return { ...principal, ...(grant.clientName === undefined ? {} : { clientName: grant.clientName }), writes: grant.writes, actorName };
}

/**
 * An administrator signed in to the console, reading what an assistant they connect would read (the console's
 * search pages): the same principal as their OAuth connection, under the id `console:<userId>`.
 */
export function consolePrincipal(env: Env, reach: AdminReach): Principal {
  return principalFromReach(env, `console:${reach.userId}`, reach);
}

/** Pure part of {@link oauthPrincipal}: scope 'brand' for exactly one brand, orgId when every brand shares one org. */
function principalFromReach(env: Env, grantId: string, reach: AdminReach): Principal {
  const brandIds = reach.brands.map((b) => b.id);
  const orgs = new Set([...reach.orgIds, ...reach.brands.map((b) => b.orgId)]);
  return {
    kind: 'oauth',
    id: grantId,
    label: reach.email,
    orgId: orgs.size === 1 ? [...orgs][0]! : null,
    scope: brandIds.length === 1 ? 'brand' : 'org',
    brandIds,
    limits: defaultLimits(env),
    userId: reach.userId,
  };
}
