// retryingDevFetch (./mcp-dev-instance.mjs; devFetch is it with the test-artifacts log), against a loopback server
// that answers as wrangler's ProxyWorker does when a forwarded request fails in transit: a POST is sent once more,
// and only that answer to a POST is; each retry is reported.
import { createServer } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retryingDevFetch } from './mcp-dev-instance.mjs';

/** Requests seen, by path; the first of each path gets its FIRST answer (status and body), later ones 200 "ok". */
const seen = new Map();
/** @type {Record<string, [number, string]>} */
const FIRST = {
  '/transit': [503, 'Your worker restarted mid-request. Please try sending the request again.'],
  '/other-503': [503, 'the Worker itself is unavailable'],
};
/** @type {import('node:http').Server} */
let server;
let base = '';
let dir = '';
let log = '';
/** @type {ReturnType<typeof retryingDevFetch>} */
let devFetch;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dev-fetch-'));
  log = join(dir, 'retries.log');
  devFetch = retryingDevFetch(log);
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    const count = (seen.get(path) ?? 0) + 1;
    seen.set(path, count);
    req.resume();
    const [status, body] = count === 1 ? (FIRST[path.split('?')[0]] ?? [200, 'ok']) : [200, 'ok'];
    res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  base = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(() => resolve(undefined)));
  await rm(dir, { recursive: true, force: true });
});

describe('devFetch', () => {
  it("sends a POST once more after the dev proxy's transit failure, with the same body", async () => {
    const res = await devFetch(`${base}/transit?post`, { method: 'POST', body: '{"jsonrpc":"2.0"}' });
    expect(res.status).toBe(200);
    expect(seen.get('/transit?post')).toBe(2);
    const bytes = await devFetch(`${base}/transit?bytes`, { method: 'POST', body: Buffer.from('{}') });
    expect(bytes.status).toBe(200);
    expect(seen.get('/transit?bytes')).toBe(2);
    // Each retry is reported, with the address it went to.
    const lines = (await readFile(log, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/POST http:\/\/127\.0\.0\.1:\d+\/transit\?post: wrangler's proxy answered 503/);
  });

  it('leaves every other answer as it came: a GET (the proxy retries those itself), another 503, a stream body', async () => {
    const get = await devFetch(`${base}/transit?get`);
    expect(get.status).toBe(503);
    expect(seen.get('/transit?get')).toBe(1);
    const other = await devFetch(`${base}/other-503`, { method: 'POST', body: '{}' });
    expect(other.status).toBe(503);
    expect(await other.text()).toBe('the Worker itself is unavailable');
    expect(seen.get('/other-503')).toBe(1);
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode('{}'));
        c.close();
      },
    });
    // Node's fetch needs `duplex` for a stream body; the DOM typings of RequestInit do not know it.
    const streamed = await devFetch(
      `${base}/transit?stream`,
      /** @type {RequestInit} */ ({ method: 'POST', body: stream, duplex: 'half' }),
    );
    expect(streamed.status).toBe(503);
    expect(seen.get('/transit?stream')).toBe(1);
    expect((await readFile(log, 'utf8')).trim().split('\n')).toHaveLength(2);
  });
});
