// `npm run dev` under raw HTTP/1.1 on one keep-alive connection: a request whose body the Worker does not read (a GET
// or DELETE with a chunked body, a POST answered 401 before its body is read) must leave the connection usable for
// the next request. workerd parsed such an unread body as the next request and answered 501; the Worker now reads
// what nobody read before answering (src/http/drain.ts). docs/local-dev.md, "Under bursts".
import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { READY_TIMEOUT_MS, sharedDevInstance } from './mcp-dev-instance.mjs';

let port;

beforeAll(async () => {
  const dev = await sharedDevInstance();
  port = Number(new URL(dev.baseUrl).port);
}, READY_TIMEOUT_MS);

/** One raw connection: send bytes, read whole HTTP/1.1 responses (Content-Length or chunked bodies) in order. */
function rawConnection() {
  const socket = connect({ host: '127.0.0.1', port });
  let buffer = Buffer.alloc(0);
  let closed = false;
  const waiters = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  socket.on('data', (d) => {
    buffer = Buffer.concat([buffer, d]);
    wake();
  });
  socket.on('close', () => {
    closed = true;
    wake();
  });
  socket.on('error', () => {});
  const more = () => new Promise((done) => waiters.push(done));

  /** The next complete response, or null when the connection closed first. */
  async function response() {
    for (;;) {
      const parsed = parse(buffer);
      if (parsed) {
        buffer = buffer.subarray(parsed.length);
        return parsed;
      }
      if (closed) return null;
      await more();
    }
  }
  return { send: (text) => socket.write(text), response, close: () => socket.destroy() };
}

/** A whole response at the start of `buf` ({ status, body, length }), or null when it is not all there yet. */
function parse(buf) {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const head = buf.subarray(0, end).toString('latin1');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  const headers = new Map(
    head
      .split('\r\n')
      .slice(1)
      .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  let at = end + 4;
  if (/chunked/i.test(headers.get('transfer-encoding') ?? '')) {
    const parts = [];
    for (;;) {
      const lineEnd = buf.indexOf('\r\n', at);
      if (lineEnd < 0) return null;
      const size = parseInt(buf.subarray(at, lineEnd).toString('latin1'), 16);
      if (buf.length < lineEnd + 2 + size + 2) return null;
      parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
      if (size === 0) return { status, body: Buffer.concat(parts).toString(), length: at };
    }
  }
  const size = Number(headers.get('content-length') ?? 0);
  if (buf.length < at + size) return null;
  return { status, body: buf.subarray(at, at + size).toString(), length: at + size };
}

const chunked = (method, path, extra = '') =>
  `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n${extra}\r\n` +
  `b\r\n{"a":"bcd"}\r\n10\r\n${'x'.repeat(16)}\r\n0\r\n\r\n`;
const plainGet = (path) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;

describe('npm run dev: an unread request body leaves the keep-alive connection usable', () => {
  for (const [name, request, firstStatus] of [
    ['a GET with a chunked body', chunked('GET', '/healthz'), 200],
    ['a DELETE with a chunked body answered 401', chunked('DELETE', '/v1/data/memories/mem_none'), 401],
    ['a POST answered 401 before its body is read', chunked('POST', '/v1/data/query', 'Content-Type: application/json\r\n'), 401],
  ]) {
    it(`${name}, then a second request on the same connection`, async () => {
      const conn = rawConnection();
      try {
        conn.send(request);
        const first = await conn.response();
        expect(first?.status).toBe(firstStatus);
        conn.send(plainGet('/healthz'));
        const second = await conn.response();
        // Before the Worker read unread bodies: 501 here (workerd took the leftover chunks for a request line).
        expect({ status: second?.status, body: second?.body }).toEqual({ status: 200, body: '{"ok":true}' });
      } finally {
        conn.close();
      }
    });
  }
});
