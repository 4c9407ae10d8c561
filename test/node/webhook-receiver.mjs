// A loopback webhook receiver for the notification tests: the Worker's queue consumer posts data-issue events to it,
// and a test tells it which reports to refuse (503) a number of times first. Reports are matched by their summary,
// which the test chooses (it does not know the report's reference before filing). Nothing leaves the machine. Every
// delivery is checked with the documented receiver's `verifyWebhook` (docs/examples/webhook-receiver.mjs) under
// TEST_WEBHOOK_SECRET, the secret vitest.config.ts gives the Worker as FEEDBACK_WEBHOOK_SECRET.
//
//   POST /hook, /hook/<anything>    a delivery: answered 503 while its summary has refusals planned, else 200
//   POST /__plan {summary, failures} refuse the next `failures` deliveries whose summary is `summary`
//   GET  /__received?summary=...    every delivery received for that summary: [{ status, body, path, verified,
//                                   headers }], oldest first
//   POST /__verify {summary, secret} the same deliveries, each verified under `secret` instead: [{ verified, error }]
import { createServer } from 'node:http';
import { verifyWebhook } from '../../docs/examples/webhook-receiver.mjs';

/** The deployment-wide signing secret of the tests (a `whsec_` of 32 bytes; not a secret anywhere else). */
export const TEST_WEBHOOK_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

/** Whether `raw` with `headers` verifies under `secret`, and why not. */
function check(/** @type {string} */ secret, /** @type {Record<string, string>} */ headers, /** @type {string} */ raw) {
  try {
    verifyWebhook(secret, headers, raw);
    return { verified: true, error: null };
  } catch (err) {
    return { verified: false, error: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * @typedef {{ status: number, body: any, raw: string, path: string, verified: boolean, headers: Record<string, string>, at: number }} Received
 */

/** The summary a delivery is about: the generic body's `summary`, or the Slack text's (after the brand's colon). */
function summaryOf(/** @type {any} */ body) {
  if (body && typeof body.summary === 'string') return body.summary;
  if (body && typeof body.text === 'string') return body.text;
  return '';
}

/**
 * Starts the receiver on a free loopback port.
 * @returns {Promise<{ url: string, received: (summary: string) => Received[], plan: (summary: string, failures: number) => void, close: () => Promise<void> }>}
 */
export async function startWebhookReceiver() {
  /** @type {Map<string, number>} */
  const planned = new Map();
  /** @type {Received[]} */
  const log = [];
  const matches = (/** @type {Received} */ r, /** @type {string} */ summary) => {
    const s = summaryOf(r.body);
    return s === summary || (typeof r.body?.text === 'string' && r.body.text.includes(summary));
  };
  const failuresFor = (/** @type {any} */ body) => {
    for (const [summary, left] of planned) {
      const s = summaryOf(body);
      if (left > 0 && (s === summary || s.includes(summary))) {
        planned.set(summary, left - 1);
        return true;
      }
    }
    return false;
  };
  const server = createServer((req, res) => {
    const chunks = /** @type {Buffer[]} */ ([]);
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://receiver');
      /** @type {any} */
      let body = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = text;
      }
      if (req.method === 'POST' && url.pathname === '/__plan') {
        planned.set(String(body?.summary ?? ''), Number(body?.failures ?? 0));
        res.writeHead(204).end();
        return;
      }
      if (req.method === 'GET' && url.pathname === '/__received') {
        const summary = url.searchParams.get('summary') ?? '';
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(log.filter((r) => matches(r, summary))));
        return;
      }
      if (req.method === 'POST' && url.pathname === '/__verify') {
        const summary = String(body?.summary ?? '');
        const secret = String(body?.secret ?? '');
        const results = log.filter((r) => matches(r, summary)).map((r) => check(secret, r.headers, r.raw));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(results));
        return;
      }
      if (req.method === 'POST' && (url.pathname === '/hook' || url.pathname.startsWith('/hook/'))) {
        const status = failuresFor(body) ? 503 : 200;
        /** @type {Record<string, string>} */
        const headers = {};
        for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
          const v = req.headers[name];
          if (typeof v === 'string') headers[name] = v;
        }
        const { verified } = check(TEST_WEBHOOK_SECRET, headers, text);
        log.push({ status, body, raw: text, path: url.pathname, verified, headers, at: Date.now() });
        res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'try later');
        return;
      }
      res.writeHead(404).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    received: (summary) => log.filter((r) => matches(r, summary)),
    plan: (summary, failures) => planned.set(summary, failures),
    close: () => new Promise((resolve) => server.close(() => resolve(undefined))),
  };
}
