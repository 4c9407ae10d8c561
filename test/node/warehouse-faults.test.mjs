// Fault injection: each kind, armed over the loopback control endpoint as workerd tests do, matched by
// SQL so parallel test files cannot trip over each other's faults.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { API, rowsOf, startTestWarehouse } from './warehouse-helpers.mjs';

let t;

beforeAll(async () => {
  t = await startTestWarehouse();
});

afterEach(async () => {
  await fetch(`${t.wh.url}/__faults`, { method: 'DELETE' });
});

afterAll(async () => {
  await t?.wh.close();
});

async function arm(spec) {
  const res = await fetch(`${t.wh.url}/__faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(spec),
  });
  expect(res.status).toBe(201);
  return res.json();
}

/** A marked query (see `marked`) with one fault armed for it alone, matched by its marker. */
async function armedFor(fault) {
  const query = marked();
  await arm({ ...fault, match: { sql: query.marker } });
  return query;
}

/** A query whose text is unique to the test, for `match.sql`. */
function marked() {
  const marker = `m${crypto.randomUUID().replaceAll('-', '')}`;
  return { marker, sql: `SELECT '${marker}' AS marker, COUNT(*) AS n FROM \`service-v1.globex.fact__orders\`` };
}

describe("error faults answer in BigQuery's error shape, once, then the query succeeds", () => {
  it.each([
    ['http500', 500, 'internalError', 'INTERNAL'],
    ['http503', 503, 'backendError', 'UNAVAILABLE'],
    ['backendError', 500, 'backendError', 'INTERNAL'],
    ['rateLimitExceeded', 403, 'rateLimitExceeded', 'PERMISSION_DENIED'],
  ])('%s -> %i %s', async (kind, status, reason, statusName) => {
    const { marker, sql } = await armedFor({ kind });
    const failed = await t.query(sql);
    expect(failed.status).toBe(status);
    expect(failed.body.error).toMatchObject({ code: status, status: statusName });
    expect(failed.body.error.errors[0].reason).toBe(reason);
    const retried = await t.query(sql);
    expect(retried.status).toBe(200);
    expect(rowsOf(retried.body)).toEqual([{ marker, n: '20000' }]);
  });

  it('rateLimitExceeded can be sent as 429, as BigQuery does for some quotas', async () => {
    const { sql } = await armedFor({ kind: 'rateLimitExceeded', status: 429 });
    const r = await t.query(sql);
    expect(r.status).toBe(429);
    expect(r.body.error.status).toBe('RESOURCE_EXHAUSTED');
    expect(r.body.error.errors[0].reason).toBe('rateLimitExceeded');
  });
});

describe('transport faults', () => {
  it('malformedJson answers 200 with a body that is not JSON', async () => {
    const { sql } = await armedFor({ kind: 'malformedJson' });
    const r = await t.query(sql);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/application\/json/);
    expect(r.body).toBeNull();
    expect(() => JSON.parse(r.text)).toThrow();
  });

  it('html502 answers a Google front end error page', async () => {
    const { sql } = await armedFor({ kind: 'html502' });
    const r = await t.query(sql);
    expect(r.status).toBe(502);
    expect(r.headers.get('content-type')).toMatch(/text\/html/);
    expect(r.text).toContain('502');
  });

  it('dropConnection closes the socket without an answer', async () => {
    const { sql } = await armedFor({ kind: 'dropConnection' });
    await expect(t.query(sql)).rejects.toThrow();
    const r = await t.query(sql);
    expect(r.status).toBe(200);
  });

  it('latency delays the answer by ms', async () => {
    const { sql } = await armedFor({ kind: 'latency', ms: 300 });
    const started = performance.now();
    const r = await t.query(sql);
    expect(r.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });
});

describe('job faults', () => {
  it('jobIncomplete answers jobComplete:false for N responses (query, then polls), then the rows', async () => {
    const { marker, sql } = await armedFor({ kind: 'jobIncomplete', count: 3 });
    const first = await t.query(sql);
    expect(first.body.jobComplete).toBe(false);
    const jobId = first.body.jobReference.jobId;
    const poll = () => t.call('GET', `${API}/queries/${jobId}?location=US&timeoutMs=1000`);
    expect((await poll()).body.jobComplete).toBe(false);
    expect((await poll()).body.jobComplete).toBe(false);
    const done = await poll();
    expect(done.body.jobComplete).toBe(true);
    expect(rowsOf(done.body)).toEqual([{ marker, n: '20000' }]);
  });

  it('slowJob keeps the job running for ms, so a short timeoutMs sees it incomplete', async () => {
    const { sql } = await armedFor({ kind: 'slowJob', ms: 500 });
    const first = await t.query(sql, { timeoutMs: 100 });
    expect(first.body.jobComplete).toBe(false);
    const done = await t.call('GET', `${API}/queries/${first.body.jobReference.jobId}?timeoutMs=5000`);
    expect(done.body.jobComplete).toBe(true);
  });

  it('a fault matched by op hits only that operation (here the first results poll)', async () => {
    const { marker, sql } = marked();
    await arm({ kind: 'jobIncomplete', count: 1, match: { sql: marker } });
    await arm({ kind: 'http503', match: { op: 'getQueryResults', sql: marker } });
    const first = await t.query(sql);
    expect(first.status).toBe(200);
    const poll = await t.call('GET', `${API}/queries/${first.body.jobReference.jobId}`);
    expect(poll.status).toBe(503);
    const again = await t.call('GET', `${API}/queries/${first.body.jobReference.jobId}`);
    expect(again.status).toBe(200);
    expect(again.body.jobComplete).toBe(true);
  });
});

describe('arming', () => {
  it('count applies the fault to that many matching requests; non-matching requests are untouched', async () => {
    const { marker, sql } = marked();
    const armed = await arm({ kind: 'http503', count: 2, match: { sql: marker } });
    expect(armed).toMatchObject({ kind: 'http503', count: 2, remaining: 2 });
    expect((await t.query('SELECT 1')).status).toBe(200);
    expect((await t.query(sql)).status).toBe(503);
    expect((await t.query(sql)).status).toBe(503);
    expect((await t.query(sql)).status).toBe(200);
  });

  it('persistent faults stay until deleted, and GET /__faults lists them with their hits', async () => {
    const { marker, sql } = marked();
    const armed = await arm({ kind: 'backendError', persistent: true, match: { sql: marker } });
    for (let i = 0; i < 3; i++) expect((await t.query(sql)).status).toBe(500);
    const listed = await (await fetch(`${t.wh.url}/__faults`)).json();
    expect(listed.faults.find((f) => f.id === armed.id)).toMatchObject({ hits: 3, remaining: null });
    const del = await fetch(`${t.wh.url}/__faults/${armed.id}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    expect((await t.query(sql)).status).toBe(200);
  });

  it('a request can ask for a fault itself with x-warehouse-fault', async () => {
    const r = await t.call('POST', `${API}/queries`, { query: 'SELECT 1', useLegacySql: false }, { 'x-warehouse-fault': 'http503' });
    expect(r.status).toBe(503);
    const spec = await t.call(
      'POST',
      `${API}/queries`,
      { query: 'SELECT 1', useLegacySql: false },
      { 'x-warehouse-fault': JSON.stringify({ kind: 'rateLimitExceeded', status: 429 }) },
    );
    expect(spec.status).toBe(429);
  });

  it('faults passed to startWarehouse are armed from the start', async () => {
    const w = await startTestWarehouse({ faults: [{ kind: 'http500', match: { op: 'query' } }] });
    try {
      expect((await w.query('SELECT 1')).status).toBe(500);
      expect((await w.query('SELECT 1')).status).toBe(200);
    } finally {
      await w.wh.close();
    }
  });

  it.each([
    [{ kind: 'explode' }, /kind must be one of/],
    [{ kind: 'http503', count: 0 }, /count must be a positive integer/],
    [{ kind: 'http503', match: { op: 'delete' } }, /match.op/],
    [{ kind: 'http503', match: { colour: 'red' } }, /unknown match field/],
  ])('refuses an invalid spec %j with 400', async (spec, message) => {
    const res = await fetch(`${t.wh.url}/__faults`, { method: 'POST', body: JSON.stringify(spec) });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(message);
  });

  it('GET /__requests shows what the client sent, without the token', async () => {
    const { marker, sql } = marked();
    await t.query(sql, { labels: { brand: 'brand_globex' }, maximumBytesBilled: '1000000000', requestId: marker.slice(0, 36) });
    const res = await fetch(`${t.wh.url}/__requests?sql=${marker}`);
    const { requests } = await res.json();
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      op: 'query',
      status: 200,
      body: { labels: { brand: 'brand_globex' }, maximumBytesBilled: '1000000000' },
    });
    expect(requests[0].auth).toEqual({ ok: true, iss: t.sa.clientEmail });
    expect(JSON.stringify(requests)).not.toContain(t.token);
  });
});
