import { z } from 'zod';
import { KEY_SETTING_NAMES, type KeyLimits, type KeySettingName } from './key-settings';

/**
 * Limits that apply to one principal, one per key setting (src/auth/key-settings.ts): the key's own value or the
 * Worker's default, resolved once when the key is read (OAuth connections: the defaults). Enforced from here.
 */
const PrincipalLimitsSchema = z.object(
  Object.fromEntries(KEY_SETTING_NAMES.map((name) => [name, z.number()])) as Record<KeySettingName, z.ZodNumber>,
);
export type PrincipalLimits = KeyLimits;

/**
 * The one caller type. REST and MCP both build one, and nothing below the transport knows which it was.
 * `brandIds` is the complete set of brands the caller can reach, computed at authentication time.
 * A schema (not just a type) because a principal also crosses the OAuth provider's `ctx.props`, which is parsed.
 */
export const PrincipalSchema = z.object({
  kind: z.enum(['key', 'oauth']),
  /** api_keys.id for keys; the OAuth grant id for OAuth connections. */
  id: z.string(),
  /** Human label for logs and the admin UI (key name, or user email). */
  label: z.string(),
  /** Org of an org-scoped key, or of the brand for a brand key / OAuth user's org where single. */
  orgId: z.string().nullable(),
  /** 'org' principals may reach several brands and must name one where ambiguous. */
  scope: z.enum(['org', 'brand']),
  brandIds: z.array(z.string()),
  limits: PrincipalLimitsSchema,
  /** For OAuth: the acting user's id. */
  userId: z.string().optional(),
  /**
   * For OAuth: what the administrator allowed the connection to write when approving it (the consent page's
   * choice). Absent for keys, whose memory permission is their own setting.
   */
  writes: z.object({ memories: z.boolean(), reports: z.boolean() }).optional(),
  /** For OAuth: who a write is recorded as, "<assistant> for <user>" (e.g. "Claude for ana@example.com"). */
  actorName: z.string().optional(),
  /** For OAuth: the assistant's name (the client's, as the consent page showed it at approval). */
  clientName: z.string().optional(),
});
export type Principal = z.infer<typeof PrincipalSchema>;

/**
 * Durable Object name of the principal's usage window (one per key, one per OAuth connection): the one place it
 * is derived (the run path and the admin usage view both call it). Takes only kind and id, so the admin view
 * can name a key's object without authenticating it.
 */
export function usageKey(p: Pick<Principal, 'kind' | 'id'>): string {
  return `${p.kind}:${p.id}`;
}
