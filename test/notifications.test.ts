// Webhook notifications of filed data-issue reports, through the real Queues producer and consumer that the pool runs
// from wrangler.toml, delivered to the loopback receiver (test/node/webhook-receiver.mjs, started by global-setup).
import { createExecutionContext, createMessageBatch, env, getQueueResult, waitOnExecutionContext } from 'cloudflare:test';
import { inject } from 'vitest';
import { beforeAll, describe, expect, it } from 'vitest';
import worker from '../src/index';
import { retryDelaySeconds, webhookBody } from '../src/features/notifications/notifications';
import { postJson, seedDemo } from './seed';

const receiver = inject('webhookUrl');

interface Received {
  status: number;
  body: Record<string, unknown>;
}

async function received(summary: string): Promise<Received[]> {
  const res = await fetch(`${receiver}/__received?summary=${encodeURIComponent(summary)}`);
  return res.json();
}

async function plan(summary: string, failures: number): Promise<void> {
  await fetch(`${receiver}/__plan`, { method: 'POST', body: JSON.stringify({ summary, failures }) });
}

async function until<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 25_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface DeliveryRow {
  attempt: number;
  outcome: string;
  http_status: number | null;
  error: string | null;
}

async function deliveries(ref: string): Promise<DeliveryRow[]> {
  const { results } = await env.DB.prepare(
    'SELECT attempt, outcome, http_status, error FROM webhook_deliveries WHERE feedback_id = ? ORDER BY attempt',
  )
    .bind(ref)
    .all<DeliveryRow>();
  return results;
}

beforeAll(async () => {
  await seedDemo();
});

describe('feedback notifications', () => {
  it('files at once, and the queue delivers to a receiver that fails twice then succeeds; each attempt recorded', async () => {
    const summary = `Revenue doubled ${crypto.randomUUID()}`;
    await plan(summary, 2);
    const started = Date.now();
    const res = await postJson('/v1/data/feedback', 'brand', { summary, severity: 'high', expected: '1.2M', observed: '2.4M' });
    expect(res.status).toBe(200);
    // The filing answered before any delivery was tried (the receiver refuses the first two for over a second).
    const ref = (res.body as { feedbackRef: string }).feedbackRef;
    expect(await received(summary)).toEqual([]);

    const got = await until(
      'a successful delivery',
      () => received(summary),
      (r) => r.some((x) => x.status === 200),
    );
    expect(got.map((r) => r.status)).toEqual([503, 503, 200]);
    expect(got[2]!.body).toEqual({
      event: 'feedback.filed',
      reference: ref,
      brandId: 'brand_acme',
      brandName: expect.any(String),
      orgId: 'org_demo',
      severity: 'high',
      summary,
      filedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      url: `https://api.test/admin/inbox/${ref}`,
    });
    // Retries waited: 1 s, then 2 s.
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
    const rows = await until(
      'three recorded attempts',
      () => deliveries(ref),
      (r) => r.length === 3,
    );
    expect(rows).toEqual([
      { attempt: 1, outcome: 'failed', http_status: 503, error: 'HTTP 503' },
      { attempt: 2, outcome: 'failed', http_status: 503, error: 'HTTP 503' },
      { attempt: 3, outcome: 'delivered', http_status: 200, error: null },
    ]);
  }, 30_000);

  it('gives up after FEEDBACK_WEBHOOK_MAX_ATTEMPTS and records the final failure (consumer called directly)', async () => {
    const summary = `Gives up ${crypto.randomUUID()}`;
    const res = await postJson('/v1/data/feedback', 'brand', { summary });
    const ref = (res.body as { feedbackRef: string }).feedbackRef;
    // Whatever the queue already delivered for it is done; now a batch on its 4th (last) attempt against a refusal.
    await until(
      'the first delivery',
      () => deliveries(ref),
      (r) => r.length >= 1,
    );
    await plan(summary, 1);
    const batch = createMessageBatch('warehouse-query-api-notifications', [
      {
        id: 'msg-last',
        timestamp: new Date(),
        attempts: 4,
        body: { kind: 'feedback-filed', feedbackRef: ref, origin: 'https://console.example' },
      },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    await waitOnExecutionContext(ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks).toEqual(['msg-last']);
    expect(result.retryMessages).toEqual([]);
    expect((await deliveries(ref)).at(-1)).toEqual({ attempt: 4, outcome: 'gave_up', http_status: 503, error: 'HTTP 503' });
  }, 15_000);

  it('asks the queue to retry with a growing delay before the limit', async () => {
    const summary = `Retries ${crypto.randomUUID()}`;
    const res = await postJson('/v1/data/feedback', 'brand', { summary });
    const ref = (res.body as { feedbackRef: string }).feedbackRef;
    await until(
      'the first delivery',
      () => deliveries(ref),
      (r) => r.length >= 1,
    );
    await plan(summary, 1);
    const batch = createMessageBatch('warehouse-query-api-notifications', [
      {
        id: 'msg-2',
        timestamp: new Date(),
        attempts: 2,
        body: { kind: 'feedback-filed', feedbackRef: ref, origin: 'https://console.example' },
      },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    const result = await getQueueResult(batch, ctx);
    // The pool reports which messages were retried, not their delay: retryDelaySeconds is the delay asked for.
    expect(result.retryMessages).toEqual([{ msgId: 'msg-2' }]);
    expect(retryDelaySeconds(env, 2)).toBe(2);
    expect(result.explicitAcks).toEqual([]);
    expect(retryDelaySeconds({ ...env, FEEDBACK_WEBHOOK_RETRY_SECONDS: '30' }, 1)).toBe(30);
    expect(retryDelaySeconds({ ...env, FEEDBACK_WEBHOOK_RETRY_SECONDS: '30' }, 5)).toBe(480);
    expect(retryDelaySeconds({ ...env, FEEDBACK_WEBHOOK_RETRY_SECONDS: '30' }, 12)).toBe(3600);
  }, 15_000);

  it('has a Slack-compatible text form with the link', () => {
    const body = webhookBody(
      'slack',
      {
        id: 'fb_1',
        brand_id: 'brand_acme',
        brand_name: 'Acme <Corp>',
        org_id: 'org_demo',
        severity: 'high',
        summary: 'a & b',
        created_at: 0,
      },
      'https://console.example/admin/inbox/fb_1',
    );
    expect(body).toEqual({
      text: 'Data issue fb_1 (high) on Acme &lt;Corp&gt; (brand_acme): a &amp; b\n<https://console.example/admin/inbox/fb_1|Open in the inbox>',
    });
  });
});
