import { beforeAll, describe, expect, it } from 'vitest';
import { api, expectError, postJson, seedDemo } from './seed';

beforeAll(async () => {
  await seedDemo();
});

describe('error responses: one body shape, x-request-id equal to error.requestId', () => {
  it('404 NOT_FOUND for an unknown path, authenticated or outside the API', async () => {
    const err = expectError(await api('/v1/data/nope', 'org'), 404, 'NOT_FOUND');
    expect(err.message).toBe('no route for GET /v1/data/nope');
    expectError(await api('/nope', null), 404, 'NOT_FOUND');
    expectError(await api('/v1/data/reports/rpt_business_overview/queries/extra', 'org'), 404, 'NOT_FOUND');
  });

  it('401 comes before 404 under /v1/data (unknown paths reveal nothing without a key)', async () => {
    expectError(await api('/v1/data/nope', null), 401, 'UNAUTHORIZED');
  });

  it.each([
    ['DELETE', '/v1/data/reports', 'GET'],
    ['POST', '/v1/data/reports/rpt_business_overview', 'GET'],
    ['PUT', '/v1/data/queries', 'GET'],
    ['GET', '/v1/data/feedback', 'POST'],
    ['PATCH', '/v1/data/reports/rpt_business_overview/queries', 'GET'],
  ])('405 METHOD_NOT_ALLOWED for %s %s, with Allow', async (method, path, allow) => {
    const res = await api(path, 'org', { method });
    const err = expectError(res, 405, 'METHOD_NOT_ALLOWED');
    expect(err.message).toContain(allow);
    expect(res.headers.get('allow')).toBe(allow);
  });

  it('400 VALIDATION for malformed JSON', async () => {
    const res = await api('/v1/data/feedback', 'org', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"summary": "x",',
    });
    const err = expectError(res, 400, 'VALIDATION');
    expect(err.message).toMatch(/JSON/i);
  });

  it('400 VALIDATION for unknown body properties, naming them', async () => {
    const err = expectError(await postJson('/v1/data/feedback', 'org', { summary: 'x', summmary: 'typo' }), 400, 'VALIDATION');
    expect(err.message).toContain('summmary');
    expect(err.details).toMatchObject({ in: 'body' });
  });

  it('415 UNSUPPORTED_MEDIA_TYPE for a non-JSON content type, and for a body without one', async () => {
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await api('/v1/data/feedback', 'org', { method: 'POST', headers: { 'content-type': contentType }, body: 'summary=x' });
      expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
    const bare = await api('/v1/data/feedback', 'org', { method: 'POST', body: new TextEncoder().encode('{"summary":"x"}') });
    expectError(bare, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('accepts application/json with a charset parameter', async () => {
    const res = await api('/v1/data/feedback', 'org', {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ summary: 'charset is fine' }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });

  it('400 VALIDATION for an empty body', async () => {
    const res = await api('/v1/data/feedback', 'org', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '' });
    expectError(res, 400, 'VALIDATION');
  });

  it('every success carries a fresh x-request-id too', async () => {
    const a = await api('/v1/data/reports', 'org');
    const b = await api('/v1/data/reports', 'org');
    expect(a.status).toBe(200);
    expect(a.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
    expect(b.headers.get('x-request-id')).not.toBe(a.headers.get('x-request-id'));
  });
});
