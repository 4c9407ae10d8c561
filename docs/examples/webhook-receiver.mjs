// A receiver for the data-issue webhook (docs/admin.md, Notifications): verifies the signature, then hands the event
// on. Node 20+, no dependencies; copy it, or use any Standard Webhooks library (https://www.standardwebhooks.com/),
// whose scheme this is.
//
//   WEBHOOK_SECRET=whsec_... PORT=8787 node docs/examples/webhook-receiver.mjs
//
// Each delivery carries three headers:
//   webhook-id         the event's id (the same on every retry of one event: de-duplicate on it)
//   webhook-timestamp  seconds since the epoch when this attempt was signed
//   webhook-signature  "v1,<base64 HMAC-SHA256>" of `${id}.${timestamp}.${body}` under the secret's bytes (the
//                      base64 after "whsec_"); several space-separated entries may appear during a secret rotation
// test/notifications.test.ts has the Worker deliver to test/node/webhook-receiver.mjs, which verifies every delivery
// with `verifyWebhook` below.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

/** How far a timestamp may be from the receiver's clock before the delivery is refused as a replay. */
export const TOLERANCE_SECONDS = 5 * 60;

/**
 * Checks one delivery. Returns the parsed event, or throws an Error saying why it is not authentic.
 * @param {string} secret the `whsec_...` secret shown when the webhook was set (or FEEDBACK_WEBHOOK_SECRET)
 * @param {Record<string, string | string[] | undefined>} headers the request's headers (lower-case names)
 * @param {string} body the raw request body, exactly as received
 * @param {number} [nowSeconds]
 */
export function verifyWebhook(secret, headers, body, nowSeconds = Math.floor(Date.now() / 1000)) {
  const one = (/** @type {string} */ name) => {
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const id = one('webhook-id');
  const timestamp = one('webhook-timestamp');
  const signatures = one('webhook-signature');
  if (!id || !timestamp || !signatures) throw new Error('missing webhook-id, webhook-timestamp or webhook-signature');
  const ts = Number(timestamp);
  if (!Number.isSafeInteger(ts) || Math.abs(nowSeconds - ts) > TOLERANCE_SECONDS) throw new Error('timestamp outside tolerance');
  if (!secret.startsWith('whsec_')) throw new Error('the secret must start with whsec_');
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  for (const entry of signatures.split(' ')) {
    const [version, sig] = entry.split(',');
    if (version !== 'v1' || !sig) continue;
    const given = Buffer.from(sig, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return JSON.parse(body);
  }
  throw new Error('no valid signature');
}

// Run as a program: listen, verify, print each event; 401 for anything not signed with the secret.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const secret = process.env.WEBHOOK_SECRET ?? '';
  const port = Number(process.env.PORT ?? 8787);
  createServer((req, res) => {
    const chunks = /** @type {Buffer[]} */ ([]);
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      try {
        const event = verifyWebhook(secret, req.headers, body);
        console.log(new Date().toISOString(), event.event, event.reference ?? '', event.url ?? '');
        res.writeHead(204).end();
      } catch (err) {
        console.warn('refused a delivery:', err instanceof Error ? err.message : err);
        res.writeHead(401).end();
      }
    });
  }).listen(port, () => console.log(`listening on http://localhost:${port}/`));
}
