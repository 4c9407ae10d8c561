import { z } from 'zod';
import { configOf, type Env } from '../../env';
import { describeError } from '../../errors';
import { newId } from '../../lib/ids';
import type { Logger } from '../../lib/log';
import type { OpContext } from '../../context';

/**
 * Notifications of filed data-issue reports, delivered through Cloudflare Queues (docs/admin.md, Notifications).
 *
 * Producer: `notifyFeedbackFiled` enqueues one message after the report is stored, in the background (waitUntil),
 * so it never delays or fails the filing request; a failed enqueue is logged with the report's reference (the
 * report itself is already in D1 and in the inbox).
 *
 * Consumer: `consumeNotifications` (the Worker's `queue` handler) posts the report's reference, brand, severity,
 * summary and the link to its inbox page to FEEDBACK_WEBHOOK_URL, as a generic JSON body or, with
 * FEEDBACK_WEBHOOK_FORMAT=slack, Slack's `{ "text": ... }`. Each attempt is a webhook_deliveries row. A failure is
 * retried through the queue (`message.retry({ delaySeconds })`) with exponential backoff from
 * FEEDBACK_WEBHOOK_RETRY_SECONDS (doubling, at most an hour) until FEEDBACK_WEBHOOK_MAX_ATTEMPTS attempts; the last
 * failed attempt is recorded as `gave_up` and the message acknowledged. wrangler.toml's `max_retries` is set above
 * that limit so the platform never drops a message before the consumer has recorded its final failure.
 */

export const NotificationSchema = z.object({
  kind: z.literal('feedback-filed'),
  feedbackRef: z.string().min(1).max(100),
  /** Origin for the link to the report's page (CONSOLE_ORIGIN, else the filing request's origin). */
  origin: z.string().max(300),
});
export type Notification = z.infer<typeof NotificationSchema>;

/** How long one webhook call may take before it counts as failed. */
const WEBHOOK_TIMEOUT_MS = 10_000;
const MAX_DELAY_SECONDS = 3600;

/** Whether a webhook is configured: without one nothing is enqueued. */
export function webhookConfigured(env: Env): boolean {
  return typeof env.FEEDBACK_WEBHOOK_URL === 'string' && env.FEEDBACK_WEBHOOK_URL.trim() !== '';
}

/** Enqueues the notification of a filed report, in the background. */
export function notifyFeedbackFiled(ctx: OpContext, feedbackRef: string): void {
  if (!webhookConfigured(ctx.env)) return;
  const origin = ctx.env.CONSOLE_ORIGIN.trim() !== '' ? ctx.env.CONSOLE_ORIGIN.trim().replace(/\/+$/, '') : (ctx.origin ?? '');
  const message: Notification = { kind: 'feedback-filed', feedbackRef, origin };
  ctx.waitUntil(
    ctx.env.NOTIFICATIONS.send(message, { contentType: 'json' }).catch((err: unknown) => {
      ctx.log.error('feedback notification not enqueued', { feedbackRef, internal: describeError(err) });
    }),
  );
}

/** The delay before retry number `attempts` (1 = after the first failure): base, 2x, 4x ..., at most an hour. */
export function retryDelaySeconds(env: Env, attempts: number): number {
  const base = configOf(env).FEEDBACK_WEBHOOK_RETRY_SECONDS;
  return Math.min(MAX_DELAY_SECONDS, base * 2 ** Math.max(0, attempts - 1));
}

const ReportRowSchema = z.object({
  id: z.string(),
  brand_id: z.string().nullable(),
  brand_name: z.string().nullable(),
  org_id: z.string().nullable(),
  severity: z.string().nullable(),
  summary: z.string(),
  created_at: z.number(),
});

/** The generic JSON body: what a receiver needs to triage the report and the link to open it. */
export function webhookBody(format: string, report: z.infer<typeof ReportRowSchema>, url: string): Record<string, unknown> {
  if (format === 'slack') {
    const brand = report.brand_id === null ? 'organization-wide' : `${report.brand_name ?? report.brand_id} (${report.brand_id})`;
    const severity = report.severity ?? 'unspecified';
    // Slack mrkdwn: &, < and > are the characters it asks to escape in text.
    const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    return { text: `Data issue ${report.id} (${severity}) on ${esc(brand)}: ${esc(report.summary)}\n<${url}|Open in the inbox>` };
  }
  return {
    event: 'feedback.filed',
    reference: report.id,
    brandId: report.brand_id,
    brandName: report.brand_name,
    orgId: report.org_id,
    severity: report.severity,
    summary: report.summary,
    filedAt: new Date(report.created_at).toISOString(),
    url,
  };
}

interface AttemptResult {
  ok: boolean;
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
}

async function callWebhook(env: Env, body: Record<string, unknown>): Promise<AttemptResult> {
  const started = Date.now();
  try {
    const res = await fetch(env.FEEDBACK_WEBHOOK_URL ?? '', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'warehouse-query-api-notifications' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    });
    // The answer's body is not needed; cancel it so the connection is released.
    await res.body?.cancel();
    return { ok: res.ok, httpStatus: res.status, error: res.ok ? null : `HTTP ${res.status}`, durationMs: Date.now() - started };
  } catch (err) {
    return { ok: false, httpStatus: null, error: describeError(err).slice(0, 300), durationMs: Date.now() - started };
  }
}

async function recordAttempt(
  env: Env,
  feedbackRef: string,
  attempt: number,
  outcome: 'delivered' | 'failed' | 'gave_up',
  r: AttemptResult,
  log: Logger,
) {
  try {
    await env.DB.prepare(
      `INSERT INTO webhook_deliveries (id, feedback_id, attempt, outcome, http_status, error, duration_ms, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
      .bind(newId('whd'), feedbackRef, attempt, outcome, r.httpStatus, r.error, r.durationMs, Date.now())
      .run();
  } catch (err) {
    // The attempt still happened; the log line keeps its record.
    log.error('webhook delivery not recorded', { feedbackRef, attempt, outcome, httpStatus: r.httpStatus, internal: describeError(err) });
  }
}

/** Delivers one message; acknowledges it, or asks the queue to retry it later. */
async function deliver(env: Env, message: Message<unknown>, log: Logger): Promise<void> {
  const parsed = NotificationSchema.safeParse(message.body);
  if (!parsed.success) {
    log.error('notification dropped: not a notification', { messageId: message.id });
    message.ack();
    return;
  }
  const { feedbackRef, origin } = parsed.data;
  const maxAttempts = configOf(env).FEEDBACK_WEBHOOK_MAX_ATTEMPTS;
  const attempt = message.attempts;
  const row = await env.DB.prepare(
    `SELECT f.id, f.brand_id, b.name AS brand_name, f.org_id, f.severity, f.summary, f.created_at
       FROM feedback f LEFT JOIN brands b ON b.id = f.brand_id WHERE f.id = ?`,
  )
    .bind(feedbackRef)
    .first();
  if (row === null) {
    const r = { ok: false, httpStatus: null, error: 'report not found', durationMs: 0 };
    await recordAttempt(env, feedbackRef, attempt, 'gave_up', r, log);
    log.error('notification dropped: report not found', { feedbackRef });
    message.ack();
    return;
  }
  const report = ReportRowSchema.parse(row);
  const url = `${origin}/admin/inbox/${encodeURIComponent(report.id)}`;
  const result = webhookConfigured(env)
    ? await callWebhook(env, webhookBody(configOf(env).FEEDBACK_WEBHOOK_FORMAT, report, url))
    : { ok: false, httpStatus: null, error: 'FEEDBACK_WEBHOOK_URL is not set', durationMs: 0 };
  if (result.ok) {
    await recordAttempt(env, feedbackRef, attempt, 'delivered', result, log);
    log.info('webhook delivered', { feedbackRef, attempt, httpStatus: result.httpStatus, durationMs: result.durationMs });
    message.ack();
    return;
  }
  if (attempt >= maxAttempts) {
    await recordAttempt(env, feedbackRef, attempt, 'gave_up', result, log);
    log.error('webhook gave up', { feedbackRef, attempt, httpStatus: result.httpStatus, error: result.error });
    message.ack();
    return;
  }
  await recordAttempt(env, feedbackRef, attempt, 'failed', result, log);
  const delaySeconds = retryDelaySeconds(env, attempt);
  log.warn('webhook failed; retrying', { feedbackRef, attempt, httpStatus: result.httpStatus, error: result.error, delaySeconds });
  message.retry({ delaySeconds });
}

/** The consumer: each message on its own, so one slow or failing webhook never holds up another. */
export async function consumeNotifications(messages: readonly Message<unknown>[], env: Env, log: Logger): Promise<void> {
  await Promise.all(
    messages.map(async (m) => {
      try {
        await deliver(env, m, log);
      } catch (err) {
        // D1 unreachable or similar: not the webhook's fault and not recorded; let the queue try again.
        log.error('notification failed before delivery; retrying', { messageId: m.id, internal: describeError(err) });
        m.retry({ delaySeconds: retryDelaySeconds(env, m.attempts) });
      }
    }),
  );
}
