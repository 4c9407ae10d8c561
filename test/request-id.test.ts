// One request id per request: the Worker front (src/oauth/worker.ts) mints it in the request's scope (src/context.ts);
// the REST app reads that id instead of minting a second one, so the front's log lines, the app's, the error body
// and the x-request-id header all carry the same id.
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it, vi } from 'vitest';
import { createApp } from '../src/app';
import { SERVICE } from '../src/composition';
import { createLogger } from '../src/lib/log';
import { inRequestScope, newRequestScope } from '../src/context';
import { toHex } from '../src/lib/ids';

describe('request id', () => {
  it("the app answers and logs with the id of the request's scope the front built", async () => {
    const request = new Request('http://api.test/v1/data/brands');
    const scope = { ...newRequestScope(request, env, 'http://api.test', () => undefined), requestId: 'req_front0000000000000000001' };
    const requestId = scope.requestId;
    scope.log = createLogger(requestId);
    const spies = (['log', 'warn', 'error'] as const).map((level) => vi.spyOn(console, level));
    try {
      const ctx = createExecutionContext();
      const res = await inRequestScope(scope, () => createApp(SERVICE).fetch(request, env, ctx));
      await waitOnExecutionContext(ctx);
      expect(res.status).toBe(401);
      expect(res.headers.get('x-request-id')).toBe(requestId);
      expect(await res.json()).toMatchObject({ error: { code: 'UNAUTHORIZED', requestId } });
      const lines = spies.flatMap((s) => s.mock.calls.map((c) => String(c[0]))).filter((l) => l.includes('/v1/data/brands'));
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(JSON.parse(line)).toMatchObject({ requestId });
    } finally {
      for (const s of spies) s.mockRestore();
    }
  });

  it('the app called on its own (no front) still gets an id of its own', async () => {
    const res = await createApp(SERVICE).fetch(new Request('http://api.test/v1/data/brands'), { ...env }, createExecutionContext());
    expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
  });
});

describe('toHex', () => {
  it('writes each byte as two lowercase hex digits', () => {
    expect(toHex(new Uint8Array([0, 1, 15, 16, 171, 255]))).toBe('00010f10abff');
    expect(toHex(new Uint8Array([]))).toBe('');
  });
});
