// The stand-in wrangler's databases, kept open by the test file over loopback. Opening a local D1 costs a Node
// import of wrangler and Miniflare plus a workerd start (seconds of CPU); the stand-in runs as a new process for
// every command, so each `d1 execute` or `d1 migrations apply` paid it again. The test file starts one server
// (`startD1Server`), which opens each database once with scripts/lib/d1.mjs's `openD1` (the same Miniflare D1
// and statement splitter as before) and keeps it until `close`; the stand-in, given its URL in
// STAND_IN_WRANGLER_D1, sends SQL there (`d1OverLoopback`). Only this module's client half is loaded by the
// stand-in: the server imports d1.mjs when it starts.
import { createServer, request } from 'node:http';

/**
 * The D1 server for one test file, on a free loopback port.
 * @returns {Promise<{ url: string, close: () => Promise<void> }>}
 */
export async function startD1Server() {
  const { openD1 } = await import('../../../scripts/lib/d1.mjs');
  /** @type {Map<string, Promise<import('../../../scripts/lib/d1.mjs').D1Executor>>} */
  const open = new Map();
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d) => (body += d));
    req.on('end', async () => {
      /** @type {{ persistTo: string, cwd: string, sql: string }} */
      const { persistTo, cwd, sql } = JSON.parse(body);
      let reply;
      try {
        let db = open.get(persistTo);
        if (!db) {
          db = openD1({ persistTo, cwd });
          open.set(persistTo, db);
        }
        reply = { results: await (await db).execute(sql) };
      } catch (e) {
        reply = { error: e instanceof Error ? e.message : String(e) };
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${address.port}`,
    async close() {
      await new Promise((resolve) => server.close(() => resolve(undefined)));
      for (const db of open.values()) await (await db).close();
      open.clear();
    },
  };
}

/**
 * A D1Executor for the database persisted at `persistTo`, served by the server at `url`; failures carry D1's
 * message, as `openD1`'s do.
 * @param {string} url
 * @param {{ persistTo: string, cwd: string }} target
 * @returns {import('../../../scripts/lib/d1.mjs').D1Executor}
 */
export function d1OverLoopback(url, target) {
  return {
    async execute(sql) {
      const reply = /** @type {{ results?: Record<string, unknown>[][], error?: string }} */ (
        JSON.parse(await post(url, JSON.stringify({ ...target, sql })))
      );
      if (reply.error !== undefined) throw new Error(reply.error);
      return reply.results ?? [];
    },
    close: async () => {},
  };
}

/**
 * POSTs `body` and resolves with the answer's text. node:http, not fetch: the stand-in is a new process for every
 * command, and loading fetch (undici) cost about as much CPU as starting Node.
 * @param {string} url @param {string} body
 * @returns {Promise<string>}
 */
function post(url, body) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d) => (text += d));
      res.on('end', () => resolve(text)).on('error', reject);
    });
    req.on('error', reject).end(body);
  });
}
