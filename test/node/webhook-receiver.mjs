// A loopback webhook receiver for the notification tests: the Worker's queue consumer posts filed data-issue reports
// to it, and a test tells it which reports to refuse (503) a number of times first. Reports are matched by their
// summary, which the test chooses (it does not know the report's reference before filing). Nothing leaves the machine.
//
//   POST /hook                      a delivery: answered 503 while its summary has refusals planned, else 200
//   POST /__plan {summary, failures} refuse the next `failures` deliveries whose summary is `summary`
//   GET  /__received?summary=...    every delivery received for that summary: [{ status, body }], oldest first
import { createServer } from 'node:http';

/**
 * @typedef {{ status: number, body: any, at: number }} Received
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
      if (req.method === 'POST' && url.pathname === '/hook') {
        const status = failuresFor(body) ? 503 : 200;
        log.push({ status, body, at: Date.now() });
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
