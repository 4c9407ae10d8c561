import { z } from 'zod';
import { configOf, type Env } from '../../env';
import { describeError } from '../../errors';
import { newId } from '../../lib/ids';
import type { Logger } from '../../lib/log';
import { anyWebhookFor, OrgWebhookUnreadable, webhookTargetFor, webhookUrlProblem, type WebhookTarget } from './org-webhook';
import { signatureHeaders } from './signature';
import { consoleOrigin } from '../../web/console-link';

/**
 * Notifications about data-issue reports, delivered through Cloudflare Queues (docs/admin.md, Notifications).
 *
 * Events: `feedback.filed` (a report was filed) and `feedback.status_changed` (an administrator changed its status on
 * the console, reopening included). Producer: `enqueueNotification` sends one message per event in the background
 * (waitUntil), so it never delays or fails the request; a failed enqueue is logged with the report's reference.
 *
 * Consumer: `consumeNotifications` (the Worker's `queue` handler) posts the event to the report's organization's own
 * webhook (org-webhook.ts) or else FEEDBACK_WEBHOOK_URL, as a generic JSON body or Slack's `{ "text": ... }`, signed
 * in the Standard Webhooks scheme (signature.ts). Each attempt is a webhook_deliveries row with a redacted reason
 * ("HTTP 503", "invalid webhook URL", "DNS failure"), never the URL or the raw fetch error. A failure is retried
 * through the queue (`message.retry({ delaySeconds })`) with exponential backoff from FEEDBACK_WEBHOOK_RETRY_SECONDS
 * (doubling, at most an hour) until FEEDBACK_WEBHOOK_MAX_ATTEMPTS attempts; the last failed attempt is recorded as
 * `gave_up` and the message acknowledged. An event that already has a `delivered` or `gave_up` row is acknowledged
 * without another call, whatever the platform's attempt count says (a redelivered message never calls again).
 *
 * The link to the report's page is built from CONSOLE_ORIGIN only, never from a request header (a request's Host
 * is the caller's to choose); without it the body's `url` is null.
 */

const Ref = z.string().min(1).max(100);
export const NotificationSchema = z.union([
  z.object({
    kind: z.literal('feedback-filed'),
    feedbackRef: Ref,
    /** Sent by Workers before the link came from configuration only; ignored. */
    origin: z.string().max(300).optional(),
  }),
  z.object({ kind: z.literal('feedback-status'), feedbackRef: Ref, changeId: Ref }),
]);
export type Notification = z.infer<typeof NotificationSchema>;

export type WebhookEvent = 'feedback.filed' | 'feedback.status_changed' | 'webhook.test';

/** How long one webhook call may take before it counts as failed. */
const WEBHOOK_TIMEOUT_MS = 10_000;
const MAX_DELAY_SECONDS = 3600;

/** What a producer needs: an OpContext has it, so has a console page (c.env, c.executionCtx.waitUntil). */
interface ProducerDeps {
  env: Env;
  log: Logger;
  waitUntil: (p: Promise<unknown>) => void;
}

/** Enqueues `message` in the background when a webhook could receive it (the org's own or the deployment's). */
export function enqueueNotification(deps: ProducerDeps, message: Notification, orgId: string | null): void {
  deps.waitUntil(
    (async () => {
      if (!(await anyWebhookFor(deps.env, orgId))) return;
      await deps.env.NOTIFICATIONS.send(message, { contentType: 'json' });
    })().catch((err: unknown) => {
      deps.log.error('notification not enqueued', { feedbackRef: message.feedbackRef, kind: message.kind, internal: describeError(err) });
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
  status: z.string(),
  created_at: z.number(),
});
type ReportRow = z.infer<typeof ReportRowSchema>;

const ChangeRowSchema = z.object({
  from_status: z.string(),
  to_status: z.string(),
  note: z.string().nullable(),
  actor_name: z.string(),
  created_at: z.number(),
});
type ChangeRow = z.infer<typeof ChangeRowSchema>;

/** One event about one report, as the body builders read it. */
export interface EventFacts {
  event: WebhookEvent;
  eventId: string;
  report: ReportRow;
  change: ChangeRow | null;
  /** The report's console page, or null without CONSOLE_ORIGIN. */
  url: string | null;
}

/** The body posted: the generic JSON (event type, ids, what a receiver needs to triage) or Slack's text. */
export function webhookBody(format: string, e: EventFacts): Record<string, unknown> {
  const { report, change } = e;
  if (format === 'slack') {
    const brand = report.brand_id === null ? 'organization-wide' : `${report.brand_name ?? report.brand_id} (${report.brand_id})`;
    const severity = report.severity ?? 'unspecified';
    // Slack mrkdwn: &, < and > are the characters it asks to escape in text.
    const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    const what =
      e.event === 'webhook.test'
        ? 'Test notification'
        : change !== null
          ? `Data issue ${report.id} is now ${change.to_status} (was ${change.from_status}, by ${esc(change.actor_name)})`
          : `Data issue ${report.id} (${severity})`;
    const link = e.url === null ? '' : `\n<${e.url}|Open in the inbox>`;
    return { text: `${what} on ${esc(brand)}: ${esc(report.summary)}${link}` };
  }
  return {
    event: e.event,
    eventId: e.eventId,
    reference: report.id,
    brandId: report.brand_id,
    brandName: report.brand_name,
    orgId: report.org_id,
    severity: report.severity,
    summary: report.summary,
    status: report.status,
    filedAt: new Date(report.created_at).toISOString(),
    ...(change === null
      ? {}
      : {
          change: {
            from: change.from_status,
            to: change.to_status,
            note: change.note,
            by: change.actor_name,
            at: new Date(change.created_at).toISOString(),
          },
        }),
    url: e.url,
  };
}

export interface AttemptResult {
  ok: boolean;
  httpStatus: number | null;
  /** A short reason safe to store and show: never the URL, a token or the raw fetch error. */
  error: string | null;
  durationMs: number;
}

/** The stored, shown reason for a call that threw: classified, never the error's own text (it can quote the URL). */
function failureReason(err: unknown): string {
  const name = err instanceof Error ? err.name : '';
  const text = describeError(err);
  if (name === 'TimeoutError' || name === 'AbortError') return 'timed out';
  if (/dns|resolv|getaddrinfo|ENOTFOUND|name not known|no such host/i.test(text)) return 'DNS failure';
  if (/invalid url|cannot load|unsupported protocol|scheme/i.test(text)) return 'invalid webhook URL';
  if (/tls|ssl|certificate/i.test(text)) return 'TLS failure';
  return 'connection failed';
}

/** One signed POST of `body` to `target`. Never throws; the result's reason is redacted. */
export async function callWebhook(
  target: WebhookTarget,
  eventId: string,
  body: Record<string, unknown>,
  log: Logger,
): Promise<AttemptResult> {
  const started = Date.now();
  const fail = (error: string): AttemptResult => ({ ok: false, httpStatus: null, error, durationMs: Date.now() - started });
  if (webhookUrlProblem(target.url) !== null) return fail('invalid webhook URL');
  if (target.secret === null && target.format === 'json') return fail('FEEDBACK_WEBHOOK_SECRET is not set');
  const text = JSON.stringify(body);
  let signature: Record<string, string> = {};
  if (target.secret !== null) {
    try {
      signature = await signatureHeaders(target.secret, eventId, Date.now(), text);
    } catch {
      return fail(target.source === 'org' ? 'signing secret unusable' : 'FEEDBACK_WEBHOOK_SECRET is not a whsec_ secret');
    }
  }
  try {
    const res = await fetch(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'warehouse-query-api-notifications', ...signature },
      body: text,
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    });
    // The answer's body is not needed; cancel it so the connection is released.
    await res.body?.cancel();
    return { ok: res.ok, httpStatus: res.status, error: res.ok ? null : `HTTP ${res.status}`, durationMs: Date.now() - started };
  } catch (err) {
    const reason = failureReason(err);
    // The operator's log gets the error's kind, with the URL cut out of its text.
    log.warn('webhook call failed', {
      eventId,
      reason,
      internal: describeError(err).split(target.url).join('<webhook URL>').slice(0, 300),
    });
    return fail(reason);
  }
}

async function recordAttempt(
  env: Env,
  e: { feedbackRef: string; eventId: string; event: WebhookEvent },
  attempt: number,
  outcome: 'delivered' | 'failed' | 'gave_up',
  r: AttemptResult,
  log: Logger,
) {
  try {
    await env.DB.prepare(
      `INSERT INTO webhook_deliveries (id, feedback_id, attempt, outcome, http_status, error, duration_ms, created_at, event_id, event)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
      .bind(newId('whd'), e.feedbackRef, attempt, outcome, r.httpStatus, r.error, r.durationMs, Date.now(), e.eventId, e.event)
      .run();
  } catch (err) {
    // The attempt still happened; the log line keeps its record.
    log.error('webhook delivery not recorded', { ...e, attempt, outcome, httpStatus: r.httpStatus, internal: describeError(err) });
  }
}

const REPORT_SQL = `SELECT f.id, f.brand_id, b.name AS brand_name, f.org_id, f.severity, f.summary, f.status, f.created_at
  FROM feedback f LEFT JOIN brands b ON b.id = f.brand_id WHERE f.id = ?`;

/** The facts of one event, read from D1; null when the report (or the change) is gone. */
async function loadEvent(env: Env, n: Notification): Promise<EventFacts | null> {
  const reportRow = await env.DB.prepare(REPORT_SQL).bind(n.feedbackRef).first();
  if (reportRow === null) return null;
  const report = ReportRowSchema.parse(reportRow);
  const origin = consoleOrigin(env);
  const url = origin === null ? null : `${origin}/admin/inbox/${encodeURIComponent(report.id)}`;
  if (n.kind === 'feedback-filed') return { event: 'feedback.filed', eventId: report.id, report, change: null, url };
  const changeRow = await env.DB.prepare(
    'SELECT from_status, to_status, note, actor_name, created_at FROM feedback_status_changes WHERE id = ? AND feedback_id = ?',
  )
    .bind(n.changeId, n.feedbackRef)
    .first();
  if (changeRow === null) return null;
  return { event: 'feedback.status_changed', eventId: n.changeId, report, change: ChangeRowSchema.parse(changeRow), url };
}

/** Delivers one message; acknowledges it, or asks the queue to retry it later. */
async function deliver(env: Env, message: Message<unknown>, log: Logger): Promise<void> {
  const parsed = NotificationSchema.safeParse(message.body);
  if (!parsed.success) {
    log.error('notification dropped: not a notification', { messageId: message.id });
    message.ack();
    return;
  }
  const n = parsed.data;
  const eventId = n.kind === 'feedback-filed' ? n.feedbackRef : n.changeId;
  const event: WebhookEvent = n.kind === 'feedback-filed' ? 'feedback.filed' : 'feedback.status_changed';
  const ids = { feedbackRef: n.feedbackRef, eventId, event };
  // What this event's earlier attempts came to: a final outcome is never followed by another call, and the attempt
  // number continues from the recorded ones (a message the platform redelivered counts on, not from 1).
  const past = await env.DB.prepare(
    `SELECT MAX(attempt) AS last, MAX(outcome IN ('delivered', 'gave_up')) AS final FROM webhook_deliveries WHERE event_id = ?`,
  )
    .bind(eventId)
    .first<{ last: number | null; final: number | null }>();
  if (past?.final === 1) {
    log.warn('notification already finished; acknowledged without a call', { ...ids, messageAttempts: message.attempts });
    message.ack();
    return;
  }
  const attempt = Math.max(message.attempts, (past?.last ?? 0) + 1);
  const maxAttempts = configOf(env).FEEDBACK_WEBHOOK_MAX_ATTEMPTS;
  const facts = await loadEvent(env, n);
  if (facts === null) {
    await recordAttempt(env, ids, attempt, 'gave_up', { ok: false, httpStatus: null, error: 'report not found', durationMs: 0 }, log);
    log.error('notification dropped: report not found', ids);
    message.ack();
    return;
  }
  let target: WebhookTarget | null;
  try {
    target = await webhookTargetFor(env, configOf(env).FEEDBACK_WEBHOOK_FORMAT, facts.report.org_id);
  } catch (err) {
    if (!(err instanceof OrgWebhookUnreadable)) throw err;
    log.error('org webhook unreadable', { ...ids, orgId: facts.report.org_id, internal: err.message });
    target = null;
  }
  const result =
    target === null
      ? { ok: false, httpStatus: null, error: 'no webhook configured', durationMs: 0 }
      : await callWebhook(target, eventId, webhookBody(target.format, facts), log);
  if (result.ok) {
    await recordAttempt(env, ids, attempt, 'delivered', result, log);
    log.info('webhook delivered', { ...ids, attempt, httpStatus: result.httpStatus, durationMs: result.durationMs });
    message.ack();
    return;
  }
  if (attempt >= maxAttempts || target === null) {
    await recordAttempt(env, ids, attempt, 'gave_up', result, log);
    log.error('webhook gave up', { ...ids, attempt, httpStatus: result.httpStatus, error: result.error });
    message.ack();
    return;
  }
  await recordAttempt(env, ids, attempt, 'failed', result, log);
  const delaySeconds = retryDelaySeconds(env, attempt);
  log.warn('webhook failed; retrying', { ...ids, attempt, httpStatus: result.httpStatus, error: result.error, delaySeconds });
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

/**
 * "Send a test": one signed `webhook.test` event to the webhook an org's reports would reach, called at once (not
 * queued, not recorded). The result's reason is redacted as a delivery's is.
 */
export async function sendTestNotification(env: Env, orgId: string, log: Logger): Promise<AttemptResult | null> {
  const target = await webhookTargetFor(env, configOf(env).FEEDBACK_WEBHOOK_FORMAT, orgId);
  if (target === null) return null;
  const eventId = newId('whtest');
  const now = Date.now();
  const origin = consoleOrigin(env);
  const facts: EventFacts = {
    event: 'webhook.test',
    eventId,
    report: {
      id: eventId,
      brand_id: null,
      brand_name: null,
      org_id: orgId,
      severity: null,
      summary: 'A test notification from the Data issues page: the webhook is reachable and its signature verifies.',
      status: 'open',
      created_at: now,
    },
    change: null,
    url: origin === null ? null : `${origin}/admin/inbox`,
  };
  return callWebhook(target, eventId, webhookBody(target.format, facts), log);
}
