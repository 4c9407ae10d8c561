// The deployment's variables are parsed once (configOf in src/env.ts) and carried on the operation context; a
// malformed one fails the request with a coded 500 whose log line names it, never a silent default.
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import worker from '../src/index';
import { configOf } from '../src/env';
import { expectError, seedDemo, TEST_KEYS } from './seed';

beforeAll(async () => {
  await seedDemo();
});

describe('configOf', () => {
  it('parses the numeric variables of the bindings', () => {
    const config = configOf(env);
    expect(config.ROW_CAP).toBe(Number(env.ROW_CAP));
    expect(config.MCP_MAX_RESULT_BYTES).toBe(Number(env.MCP_MAX_RESULT_BYTES));
    expect(config.DEFAULT_DAILY_BYTES_LIMIT).toBe(Number(env.DEFAULT_DAILY_BYTES_LIMIT));
    expect(config.CATALOG_CACHE_TTL_MS).toBe(Number(env.CATALOG_CACHE_TTL_MS));
  });

  it('parses once: the same env, or a per-request copy of it, gets the same object', () => {
    expect(configOf({ ...env })).toBe(configOf(env));
    const other = configOf({ ...env, ROW_CAP: '7' });
    expect(other.ROW_CAP).toBe(7);
    expect(other).not.toBe(configOf(env));
  });

  it('refuses a malformed or missing number, naming the variable', () => {
    expect(() => configOf({ ...env, ROW_CAP: 'ten' })).toThrow('configuration variable ROW_CAP must be a positive integer, got "ten"');
    expect(() => configOf({ ...env, MCP_ROW_CAP: '0' })).toThrow('configuration variable MCP_ROW_CAP must be a positive integer, got "0"');
    const { QUERY_TIMEOUT_MS: _dropped, ...missing } = env;
    expect(() => configOf(missing as typeof env)).toThrow(
      'configuration variable QUERY_TIMEOUT_MS must be a positive integer, got undefined',
    );
    expect(() => configOf({ ...env, AUTH_CACHE_TTL_MS: '-1' })).toThrow(
      'configuration variable AUTH_CACHE_TTL_MS must be a whole number >= 0, got "-1"',
    );
  });

  it('reads an unset or empty cache TTL as 0 (off)', () => {
    expect(configOf({ ...env, CATALOG_CACHE_TTL_MS: '' }).CATALOG_CACHE_TTL_MS).toBe(0);
  });
});

describe('a malformed variable in a deployment', () => {
  it('fails the request with 500 INTERNAL and a request id; the log names the variable', async () => {
    const errors = vi.spyOn(console, 'error');
    try {
      const ctx = createExecutionContext();
      const request = new Request('http://api.test/v1/data/brands', { headers: { authorization: `Bearer ${TEST_KEYS.brand}` } });
      const res = await worker.fetch(request, { ...env, MCP_ROW_CAP: '200 rows' }, ctx);
      await waitOnExecutionContext(ctx);
      const body: unknown = await res.json();
      const error = expectError({ status: res.status, headers: res.headers, body }, 500, 'INTERNAL');
      expect(JSON.stringify(body)).not.toContain('MCP_ROW_CAP');
      const logged = errors.mock.calls.map((c) => String(c[0])).find((line) => line.includes(error.requestId));
      expect(logged).toContain('configuration variable MCP_ROW_CAP must be a positive integer, got \\"200 rows\\"');
    } finally {
      errors.mockRestore();
    }
  });
});
