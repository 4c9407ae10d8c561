import type { GrantSummary, OAuthHelpers } from '@cloudflare/workers-oauth-provider';
import type { AdminReach } from '../../auth/oauth-principal';
import type { Env } from '../../env';
import { forgetGrantUse, grantLastUsed } from '../../oauth/grant-activity';
import { encodeGrantUserId, GrantMetadataSchema } from '../../oauth/grant-user';

/**
 * Connected assistants (OAuth grants) as an administrator sees them: their own, and those of every user whose
 * whole reach lies inside theirs (an org administrator sees the org's brand administrators' connections; a brand
 * administrator sees only connections limited to their brand). Revoking deletes the grant and its tokens.
 */

export interface ConnectedAssistant {
  grantId: string;
  userId: string;
  userEmail: string;
  clientId: string;
  clientName: string;
  redirectHost: string | null;
  /** ms since epoch */
  connectedAt: number;
  lastUsedAt: number | null;
  /** What the approving administrator allowed it to write; null for a connection approved before the choice. */
  writes: { memories: boolean; reports: boolean } | null;
}

/** Pages of grants read per user; far above what one person connects. */
const MAX_GRANT_PAGES = 5;

/** Users whose every membership is inside the administrator's reach (always includes the administrator). */
async function usersWithin(env: Env, reach: AdminReach): Promise<{ id: string; email: string }[]> {
  const { results } = await env.DB.prepare(
    `SELECT u.id, u.email FROM users u
      WHERE EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = u.id)
        AND NOT EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = u.id AND NOT (
              (m.org_id IS NOT NULL AND m.org_id IN (SELECT value FROM json_each(?1)))
           OR (m.brand_id IS NOT NULL AND m.brand_id IN (SELECT value FROM json_each(?2)))))
      ORDER BY u.email`,
  )
    .bind(JSON.stringify(reach.orgIds), JSON.stringify(reach.brands.map((b) => b.id)))
    .all<{ id: string; email: string }>();
  return results;
}

async function grantsOf(helpers: OAuthHelpers, userId: string): Promise<GrantSummary[]> {
  const out: GrantSummary[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_GRANT_PAGES; page++) {
    const res = await helpers.listUserGrants(encodeGrantUserId(userId), cursor ? { cursor } : {});
    out.push(...res.items);
    if (!res.cursor) break;
    cursor = res.cursor;
  }
  return out;
}

/** Connected assistants the administrator may see and revoke, newest first. */
export async function listManagedAssistants(env: Env, helpers: OAuthHelpers, reach: AdminReach): Promise<ConnectedAssistant[]> {
  const users = await usersWithin(env, reach);
  const perUser = await Promise.all(
    users.map(async (u) =>
      Promise.all(
        (await grantsOf(helpers, u.id)).map(async (g): Promise<ConnectedAssistant> => {
          const meta = GrantMetadataSchema.safeParse(g.metadata);
          return {
            grantId: g.id,
            userId: u.id,
            userEmail: u.email,
            clientId: g.clientId,
            clientName: (meta.success ? meta.data.clientName : undefined) ?? g.clientId,
            redirectHost: (meta.success ? meta.data.redirectHost : undefined) ?? null,
            connectedAt: g.createdAt * 1000,
            lastUsedAt: await grantLastUsed(env, g.id),
            writes: (meta.success ? meta.data.writes : undefined) ?? null,
          };
        }),
      ),
    ),
  );
  return perUser.flat().sort((a, b) => b.connectedAt - a.connectedAt);
}

/**
 * Revokes one connection the administrator may manage; false when it is not theirs to revoke or already gone.
 * The grant's tokens are deleted with it, so the assistant's next request is refused and it must be approved again.
 */
export async function revokeManagedAssistant(
  env: Env,
  helpers: OAuthHelpers,
  reach: AdminReach,
  target: { userId: string; grantId: string },
): Promise<boolean> {
  const users = await usersWithin(env, reach);
  if (!users.some((u) => u.id === target.userId)) return false;
  const grants = await grantsOf(helpers, target.userId);
  if (!grants.some((g) => g.id === target.grantId)) return false;
  await helpers.revokeGrant(target.grantId, encodeGrantUserId(target.userId));
  await forgetGrantUse(env, target.grantId);
  return true;
}
