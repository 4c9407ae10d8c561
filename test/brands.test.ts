import { env, SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';

describe('GET /v1/data/brands', () => {
  it('401 UNAUTHORIZED without a key, with request id header equal to body', async () => {
    const res = await SELF.fetch('http://x/v1/data/brands');
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error: { code: string; requestId: string } };
    expect(body.error.code).toBe('UNAUTHORIZED');
    expect(res.headers.get('x-request-id')).toBe(body.error.requestId);
  });
  it('has the schema applied', async () => {
    const r = await env.DB.prepare('SELECT count(*) AS n FROM brands').first<{ n: number }>();
    expect(r?.n).toBe(0);
  });
});
