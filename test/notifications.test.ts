// Webhook notifications of filed data-issue reports, through the real Queues producer and consumer that the pool runs
// from wrangler.toml, delivered to the loopback receiver (test/node/webhook-receiver.mjs, started by global-setup).
import { createExecutionContext, createMessageBatch, env, getQueueResult, SELF, waitOnExecutionContext } from 'cloudflare:test';
import { inject } from 'vitest';
import { beforeAll, describe, expect, it } from 'vitest';
import worker from '../src/index';
import { retryDelaySeconds, webhookBody } from '../src/features/notifications/notifications';
import { setOrgWebhook } from '../src/features/notifications/org-webhook';
import { inputValue, location } from './oauth-client';
import { page, signedIn } from './admin-client';
import { postJson, seedDemo, TEST_ADMINS, TEST_KEYS } from './seed';

const receiver = inject('webhookUrl');

interface Received {
  status: number;
  body: Record<string, unknown>;
  path: string;
  verified: boolean;
  headers: Record<string, string>;
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

/** Files a report as the brand key and waits for its queued delivery to finish (delivered on the first try). */
async function fileAndSettle(summary: string): Promise<string> {
  const res = await postJson('/v1/data/feedback', 'brand', { summary });
  expect(res.status).toBe(200);
  const ref = (res.body as { feedbackRef: string }).feedbackRef;
  await until(
    'the first delivery',
    () => deliveries(ref),
    (r) => r.some((d) => d.outcome === 'delivered'),
  );
  // A fresh start for the batches a test then runs itself.
  await env.DB.prepare('DELETE FROM webhook_deliveries WHERE feedback_id = ?').bind(ref).run();
  return ref;
}

/** Runs one notification message through the consumer with `e`, as the queue would on attempt `attempts`. */
async function runBatch(e: typeof env, ref: string, id: string, attempts: number) {
  const batch = createMessageBatch('warehouse-query-api-notifications', [
    { id, timestamp: new Date(), attempts, body: { kind: 'feedback-filed', feedbackRef: ref } },
  ]);
  const ctx = createExecutionContext();
  await worker.queue(batch, e);
  const result = await getQueueResult(batch, ctx);
  return { explicitAcks: result.explicitAcks, retryMessages: result.retryMessages };
}

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
      eventId: ref,
      reference: ref,
      brandId: 'brand_acme',
      brandName: expect.any(String),
      orgId: 'org_demo',
      severity: 'high',
      summary,
      status: 'open',
      filedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      // CONSOLE_ORIGIN (vitest.config.ts), not the request's http://api.test.
      url: `https://console.test/admin/inbox/${ref}`,
    });
    // Every attempt is signed (Standard Webhooks) and verifies with the documented receiver's function; the event id
    // is the same on every retry, so a receiver can de-duplicate.
    expect(got.map((r) => [r.verified, r.headers['webhook-id']])).toEqual([
      [true, ref],
      [true, ref],
      [true, ref],
    ]);
    expect(got[2]!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
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
    const ref = await fileAndSettle(summary);
    // Now a batch on its 4th (last) attempt against a refusal.
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

  it('never calls again once an event gave up, whatever attempt count the queue redelivers it with', async () => {
    const summary = `Redelivered ${crypto.randomUUID()}`;
    const ref = await fileAndSettle(summary);
    const before = (await received(summary)).length;
    // The last attempt fails and gives up ...
    await plan(summary, 1);
    expect(await runBatch(env, ref, 'msg-a', 4)).toEqual({ explicitAcks: ['msg-a'], retryMessages: [] });
    const afterGiveUp = await deliveries(ref);
    expect(afterGiveUp).toEqual([{ attempt: 4, outcome: 'gave_up', http_status: 503, error: 'HTTP 503' }]);
    const calls = (await received(summary)).length;
    expect(calls).toBe(before + 1);
    // ... and the same message delivered again (attempts 5..9, as the platform did) is acknowledged without a call or
    // another row, even with a working webhook.
    for (const attempts of [5, 9]) {
      expect(await runBatch(env, ref, `msg-${attempts}`, attempts)).toEqual({ explicitAcks: [`msg-${attempts}`], retryMessages: [] });
    }
    expect(await deliveries(ref)).toEqual(afterGiveUp);
    expect((await received(summary)).length).toBe(calls);
  }, 20_000);

  it('stores and shows a redacted reason for a scheme-less webhook URL, never the URL', async () => {
    const summary = `Scheme-less ${crypto.randomUUID()}`;
    const ref = await fileAndSettle(summary);
    const token = `T0SECRET${crypto.randomUUID().replace(/-/g, '')}`;
    const schemeLess = { ...env, FEEDBACK_WEBHOOK_URL: `hooks.slack.example/services/${token}` };
    expect(await runBatch(schemeLess, ref, 'msg-s2', 2)).toEqual({ explicitAcks: [], retryMessages: [{ msgId: 'msg-s2' }] });
    expect(await runBatch(schemeLess, ref, 'msg-s4', 4)).toEqual({ explicitAcks: ['msg-s4'], retryMessages: [] });
    const rows = await deliveries(ref);
    expect(rows.slice(-2)).toEqual([
      { attempt: 2, outcome: 'failed', http_status: null, error: 'invalid webhook URL' },
      { attempt: 4, outcome: 'gave_up', http_status: null, error: 'invalid webhook URL' },
    ]);
    const stored = await env.DB.prepare('SELECT group_concat(error) AS e FROM webhook_deliveries').first<{ e: string }>();
    expect(stored?.e).not.toContain(token);
    // The brand administrator's report page says why, and nothing of the URL.
    const html = await page(await signedIn(TEST_ADMINS.brand, '198.51.100.71'), `/admin/inbox/${ref}`);
    expect(html).toContain('invalid webhook URL');
    expect(html).not.toContain(token);
    expect(html).not.toContain('hooks.slack.example');
  }, 20_000);

  it("builds the report's link from CONSOLE_ORIGIN only, never from the request's Host", async () => {
    const summary = `Host header ${crypto.randomUUID()}`;
    const res = await SELF.fetch('https://console-login.evil.example/v1/data/feedback', {
      method: 'POST',
      headers: {
        host: 'console-login.evil.example',
        authorization: `Bearer ${TEST_KEYS.brand}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ summary }),
    });
    expect(res.status).toBe(200);
    const ref = ((await res.json()) as { feedbackRef: string }).feedbackRef;
    const got = await until(
      'the delivery',
      () => received(summary),
      (r) => r.some((x) => x.status === 200),
    );
    expect(got.at(-1)!.body.url).toBe(`https://console.test/admin/inbox/${ref}`);
    expect(JSON.stringify(got)).not.toContain('evil.example');
    // Without CONSOLE_ORIGIN the event carries no link at all (a message enqueued by an older Worker with an
    // `origin` from the request included).
    const noOrigin = { ...env, CONSOLE_ORIGIN: '' };
    const batch = createMessageBatch('warehouse-query-api-notifications', [
      {
        id: 'msg-o',
        timestamp: new Date(),
        attempts: 1,
        body: { kind: 'feedback-filed', feedbackRef: ref, origin: 'https://evil.example' },
      },
    ]);
    await env.DB.prepare('DELETE FROM webhook_deliveries WHERE event_id = ?').bind(ref).run();
    const ctx = createExecutionContext();
    await worker.queue(batch, noOrigin);
    await getQueueResult(batch, ctx);
    const last = (await received(summary)).at(-1)!;
    expect(last.body.url).toBeNull();
    expect(JSON.stringify(last.body)).not.toContain('evil.example');
  }, 30_000);

  it('fires feedback.status_changed when an administrator changes the status, signed and with the change', async () => {
    const summary = `Status event ${crypto.randomUUID()}`;
    const ref = await fileAndSettle(summary);
    const browser = await signedIn(TEST_ADMINS.org, '198.51.100.72');
    const detail = await page(browser, `/admin/inbox/${ref}`);
    const res = await browser.post(`/admin/inbox/${ref}/status`, {
      csrf: inputValue(detail, 'csrf'),
      from: 'open',
      status: 'resolved',
      note: 'Fixed the join',
    });
    expect(res.status).toBe(303);
    const got = await until(
      'the status event',
      () => received(summary),
      (r) => r.some((x) => x.body.event === 'feedback.status_changed'),
    );
    const ev = got.find((x) => x.body.event === 'feedback.status_changed')!;
    expect(ev.verified).toBe(true);
    expect(ev.body).toMatchObject({
      event: 'feedback.status_changed',
      reference: ref,
      status: 'resolved',
      change: { from: 'open', to: 'resolved', note: 'Fixed the join', by: TEST_ADMINS.org.email },
      url: `https://console.test/admin/inbox/${ref}`,
    });
    expect(ev.body.eventId).toMatch(/^fsc_/);
    expect(ev.headers['webhook-id']).toBe(ev.body.eventId);
  }, 30_000);

  it("posts an organization's own webhook, sealed, signed with its own secret, and sends a test from the page", async () => {
    const browser = await signedIn(TEST_ADMINS.org, '198.51.100.73');
    const settings = await page(browser, '/admin/notifications');
    const token = `orgtoken${crypto.randomUUID().replace(/-/g, '')}`;
    const orgUrl = `${receiver}/hook/${token}`;
    const saved = await browser.post('/admin/notifications/org_demo', { csrf: inputValue(settings, 'csrf'), url: orgUrl, format: 'json' });
    expect(saved.status).toBe(303);
    expect(location(saved).pathname).toBe('/admin/notifications');
    const shown = await page(browser, '/admin/notifications');
    const secret = /id="webhook-secret"[^>]*value="([^"]+)"/.exec(shown)?.[1] ?? '';
    expect(secret).toMatch(/^whsec_/);
    expect(shown).not.toContain(token);
    // Shown once: a reload has no secret, and never the URL.
    const again = await page(browser, '/admin/notifications');
    expect(again).not.toContain(secret);
    expect(again).not.toContain(token);
    expect(again).toContain('Its own webhook is set (json)');
    // Stored sealed: neither the URL nor the secret appears in the row.
    const row = await env.DB.prepare("SELECT * FROM org_webhooks WHERE org_id = 'org_demo'").first();
    expect(JSON.stringify(row)).not.toContain(token);
    expect(JSON.stringify(row)).not.toContain(secret.slice(6));

    // "Send a test": delivered at once to the org's webhook, reported on the page.
    const tested = await browser.post('/admin/notifications/org_demo/test', { csrf: inputValue(again, 'csrf') });
    expect(tested.status).toBe(303);
    expect(await page(browser, '/admin/notifications')).toContain('Test delivered (HTTP 200');
    const testSummary = 'A test notification from the Data issues page: the webhook is reachable and its signature verifies.';
    const tests = await received(testSummary);
    expect(tests.at(-1)).toMatchObject({ path: `/hook/${token}`, body: { event: 'webhook.test', orgId: 'org_demo' } });

    // A filed report of org_demo goes to the org's webhook, signed with the org's secret, not the deployment's.
    const summary = `Org webhook ${crypto.randomUUID()}`;
    const res = await postJson('/v1/data/feedback', 'brand', { summary });
    expect(res.status).toBe(200);
    const got = await until(
      'the org delivery',
      () => received(summary),
      (r) => r.some((x) => x.status === 200),
    );
    expect(got.map((r) => [r.path, r.verified])).toEqual([[`/hook/${token}`, false]]);
    const verify = await fetch(`${receiver}/__verify`, { method: 'POST', body: JSON.stringify({ summary, secret }) });
    expect(await verify.json()).toEqual([{ verified: true, error: null }]);

    // Removed: the deployment's webhook receives again.
    const cleared = await browser.post('/admin/notifications/org_demo/clear', { csrf: inputValue(again, 'csrf') });
    expect(cleared.status).toBe(303);
    expect(await env.DB.prepare("SELECT 1 FROM org_webhooks WHERE org_id = 'org_demo'").first()).toBeNull();
  }, 40_000);

  it("refuses another organization's webhook settings and a URL that is not https", async () => {
    const browser = await signedIn(TEST_ADMINS.org, '198.51.100.74');
    const settings = await page(browser, '/admin/notifications');
    const csrf = inputValue(settings, 'csrf');
    const other = await browser.post('/admin/notifications/org_other', { csrf, url: 'https://example.com/hook', format: 'json' });
    expect(other.status).toBe(400);
    expect(await env.DB.prepare("SELECT 1 FROM org_webhooks WHERE org_id = 'org_other'").first()).toBeNull();
    const plain = await browser.post('/admin/notifications/org_demo', { csrf, url: 'http://example.com/hook', format: 'json' });
    expect(plain.status).toBe(400);
    expect(await plain.text()).toContain('must start with https://');
    // A row sealed for one org does not open as another's.
    await setOrgWebhook(env, 'org_x1', { url: 'https://example.com/a', format: 'json' }, 'test', Date.now());
    await env.DB.prepare("UPDATE org_webhooks SET org_id = 'org_x2' WHERE org_id = 'org_x1'").run();
    const { webhookTargetFor } = await import('../src/features/notifications/org-webhook');
    await expect(webhookTargetFor(env, 'json', 'org_x2')).rejects.toThrow(/org_x2/);
  }, 30_000);

  it('asks the queue to retry with a growing delay before the limit', async () => {
    const summary = `Retries ${crypto.randomUUID()}`;
    const ref = await fileAndSettle(summary);
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
    const body = webhookBody('slack', {
      event: 'feedback.filed',
      eventId: 'fb_1',
      report: {
        id: 'fb_1',
        brand_id: 'brand_acme',
        brand_name: 'Acme <Corp>',
        org_id: 'org_demo',
        severity: 'high',
        summary: 'a & b',
        status: 'open',
        created_at: 0,
      },
      change: null,
      url: 'https://console.example/admin/inbox/fb_1',
    });
    expect(body).toEqual({
      text: 'Data issue fb_1 (high) on Acme &lt;Corp&gt; (brand_acme): a &amp; b\n<https://console.example/admin/inbox/fb_1|Open in the inbox>',
    });
  });
});
