import { z } from 'zod';
import type { Env } from '../../env';
import { seal, unseal, UnsealError } from '../../warehouse/credential-seal';
import { newWebhookSecret } from './signature';

/**
 * An organization's own notification webhook (table org_webhooks): where that org's data-issue events are posted,
 * instead of the deployment's FEEDBACK_WEBHOOK_URL. The URL (which often carries a token, as Slack's do) and the
 * signing secret are sealed together under CREDENTIALS_KEY with the org id as authenticated data, exactly as brand
 * credentials are (src/warehouse/credential-seal.ts), and are never displayed: the page shows that one is set, its
 * format, who set it and when. The secret is shown once, when the webhook is set.
 */

export const WEBHOOK_FORMATS = ['json', 'slack'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/** Where one event goes: the org's own webhook or the deployment's. `secret` null: unsigned (never for `org`). */
export interface WebhookTarget {
  source: 'org' | 'deployment';
  url: string;
  secret: string | null;
  format: WebhookFormat;
}

export interface OrgWebhookStatus {
  orgId: string;
  format: WebhookFormat;
  updatedBy: string;
  updatedAt: number;
}

const URL_MAX = 2_000;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Why `raw` is not a webhook URL we post to, or null: https, or http to a loopback host (a receiver on the
 * developer's machine). The reason never quotes the URL.
 */
export function webhookUrlProblem(raw: string): string | null {
  if (raw.length > URL_MAX) return `the URL must be at most ${URL_MAX} characters`;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'not a URL (it needs https://)';
  }
  if (u.protocol === 'https:') return null;
  if (u.protocol === 'http:' && LOOPBACK.has(u.hostname)) return null;
  return 'the URL must start with https:// (http:// only to localhost)';
}

const SealedSchema = z.object({ iv: z.string(), ciphertext: z.string() });
const PlainSchema = z.object({ url: z.string(), secret: z.string() });
const RowSchema = z.object({
  org_id: z.string(),
  format: z.enum(WEBHOOK_FORMATS),
  key_id: z.string(),
  sealed: z.string(),
  updated_by: z.string(),
  updated_at: z.number(),
});

/** Seals and stores `url` for `orgId` with a fresh signing secret, which is returned (to be shown once). */
export async function setOrgWebhook(
  env: Env,
  orgId: string,
  input: { url: string; format: WebhookFormat },
  by: string,
  now: number,
): Promise<{ secret: string }> {
  const key = env.CREDENTIALS_KEY;
  if (!key) throw new Error('CREDENTIALS_KEY is not set');
  const secret = newWebhookSecret();
  const sealed = await seal(key, orgId, JSON.stringify({ url: input.url, secret }), 'org-webhook');
  await env.DB.prepare(
    `INSERT INTO org_webhooks (org_id, format, key_id, sealed, updated_by, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
     ON CONFLICT (org_id) DO UPDATE SET format = ?2, key_id = ?3, sealed = ?4, updated_by = ?5, updated_at = ?6`,
  )
    .bind(orgId, input.format, sealed.keyId, JSON.stringify({ iv: sealed.iv, ciphertext: sealed.ciphertext }), by, now)
    .run();
  return { secret };
}

export async function clearOrgWebhook(env: Env, orgId: string): Promise<void> {
  await env.DB.prepare('DELETE FROM org_webhooks WHERE org_id = ?').bind(orgId).run();
}

/** What may be shown of the orgs' webhooks: never the URL or the secret. */
export async function orgWebhookStatuses(env: Env, orgIds: readonly string[]): Promise<OrgWebhookStatus[]> {
  if (orgIds.length === 0) return [];
  const { results } = await env.DB.prepare(
    'SELECT org_id, format, updated_by, updated_at FROM org_webhooks WHERE org_id IN (SELECT value FROM json_each(?))',
  )
    .bind(JSON.stringify(orgIds))
    .all<{ org_id: string; format: WebhookFormat; updated_by: string; updated_at: number }>();
  return results.map((r) => ({ orgId: r.org_id, format: r.format, updatedBy: r.updated_by, updatedAt: r.updated_at }));
}

/** A stored org webhook that does not open (CREDENTIALS_KEY rotated away, or the row altered). */
export class OrgWebhookUnreadable extends Error {}

/**
 * Where an event about a report of `orgId` goes: the org's webhook when it has one, else the deployment's
 * FEEDBACK_WEBHOOK_URL (signed with FEEDBACK_WEBHOOK_SECRET when set), else nowhere (null).
 */
export async function webhookTargetFor(env: Env, format: WebhookFormat, orgId: string | null): Promise<WebhookTarget | null> {
  if (orgId !== null) {
    const row = await env.DB.prepare('SELECT * FROM org_webhooks WHERE org_id = ?').bind(orgId).first();
    if (row !== null) {
      const r = RowSchema.parse(row);
      try {
        const sealed = SealedSchema.parse(JSON.parse(r.sealed));
        const plain = PlainSchema.parse(
          JSON.parse(
            await unseal([env.CREDENTIALS_KEY, env.CREDENTIALS_KEY_PREVIOUS], orgId, { keyId: r.key_id, ...sealed }, 'org-webhook'),
          ),
        );
        return { source: 'org', url: plain.url, secret: plain.secret, format: r.format };
      } catch (err) {
        throw new OrgWebhookUnreadable(err instanceof UnsealError ? err.message : 'the stored org webhook is malformed');
      }
    }
  }
  const url = env.FEEDBACK_WEBHOOK_URL?.trim() ?? '';
  if (url === '') return null;
  const secret = env.FEEDBACK_WEBHOOK_SECRET?.trim() ?? '';
  return { source: 'deployment', url, secret: secret === '' ? null : secret, format };
}

/** Whether any webhook could receive an event about a report of `orgId` (so whether to enqueue one). */
export async function anyWebhookFor(env: Env, orgId: string | null): Promise<boolean> {
  if ((env.FEEDBACK_WEBHOOK_URL?.trim() ?? '') !== '') return true;
  if (orgId === null) return false;
  return (await env.DB.prepare('SELECT 1 FROM org_webhooks WHERE org_id = ?').bind(orgId).first()) !== null;
}
