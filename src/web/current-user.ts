import type { Context } from 'hono';
import type { AppEnv } from '../app-env';
import { loadAdminReach, type AdminReach } from '../auth/oauth-principal';
import { readSession, type Session } from './session';

/** The signed-in user of a request and what they administer (reach may be empty: not an administrator). */
export interface SignedIn {
  session: Session;
  reach: AdminReach;
}

/** The session's user, re-read from D1 on every request; null when signed out or the user no longer exists. */
export async function currentUser(c: Context<AppEnv>, now: number): Promise<SignedIn | null> {
  const session = await readSession(c, now);
  if (!session) return null;
  const reach = await loadAdminReach(c.env, session.userId);
  return reach ? { session, reach } : null;
}
