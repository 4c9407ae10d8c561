import { env, SELF } from 'cloudflare:test';
import { expect } from 'vitest';
import { z } from 'zod';
import { generateApiKey, type GeneratedKey } from '../src/auth/api-keys';
import { buildDemoSeed, type DemoSeedInput } from '../src/seed/demo-tenants';
import { peekUsage } from '../src/usage/usage';
import { DEMO_CATALOG_FILES } from './demo-catalog';

/** Fixed test secrets: shaped like real keys (prefix + 43 base64url characters) so auth treats them as such. */
/**
 * vi.waitFor's options for what the Worker finishes in waitUntil after its answer (a settle, a "last used" stamp, a
 * revocation): polled every 20 ms, given up after 10 s, so a loaded machine is waited for and a broken one still fails.
 */
export const WAIT_UNTIL_WORK = { timeout: 10_000, interval: 20 };

export const TEST_KEYS = {
  org: 'wqk_testOrgDemo0000000000000000000000000000000',
  brand: 'wqk_testBrandAcme00000000000000000000000000000',
  other: 'wqk_testOrgOther000000000000000000000000000000',
} as const;

export const TEST_ADMINS = {
  org: { email: 'org-admin@demo.test', password: 'org-admin-password-1' },
  brand: { email: 'acme-admin@demo.test', password: 'acme-admin-password-1' },
} as const;

export type TestKey = keyof typeof TEST_KEYS;

/**
 * A fresh key of one brand (brand_acme unless named), its own usage window and label: a test's warehouse jobs and
 * usage are then its own, whatever the files beside it run.
 */
export async function addBrandKey(name: string, brandId = 'brand_acme'): Promise<GeneratedKey> {
  const key = await generateApiKey();
  await env.DB.prepare('INSERT INTO api_keys (id, name, prefix, secret_hash, brand_id, created_at) VALUES (?, ?, ?, ?, ?, 0)')
    .bind(key.id, name, key.prefix, key.secretHash, brandId)
    .run();
  return key;
}

/** Applies the demo seed (tenants, keys, admins, catalog) to this test file's D1 with the fixed test secrets. */
export async function seedDemo(now: number = Date.now()): Promise<Pick<DemoSeedInput, 'keys' | 'admins'>> {
  const input: DemoSeedInput = {
    now,
    keys: { ...TEST_KEYS },
    admins: { org: { ...TEST_ADMINS.org }, brand: { ...TEST_ADMINS.brand } },
    catalog: DEMO_CATALOG_FILES,
  };
  const statements = await buildDemoSeed(input);
  await env.DB.batch(statements.map((s) => env.DB.prepare(s)));
  return { keys: input.keys, admins: input.admins };
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

/** Calls the Worker through its own fetch handler as one of the demo keys (or unauthenticated with `null`). */
export async function api(path: string, key: TestKey | null, init: RequestInit = {}): Promise<ApiResponse> {
  const headers = new Headers(init.headers);
  if (key !== null) headers.set('authorization', `Bearer ${TEST_KEYS[key]}`);
  const res = await SELF.fetch(`http://api.test${path}`, { ...init, headers });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the test sees the raw text (and its assertions on a JSON body will fail, as they should).
  }
  return { status: res.status, headers: res.headers, body };
}

/** POSTs a JSON body. */
export function postJson(path: string, key: TestKey | null, body: unknown): Promise<ApiResponse> {
  return api(path, key, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

const ErrorBodySchema = z.strictObject({
  error: z.strictObject({ code: z.string(), message: z.string().min(1), requestId: z.string().min(1), details: z.unknown().optional() }),
});

/**
 * Asserts the spec's error contract: the status, the code, `{ error: { code, message, requestId, details? } }` and
 * an `x-request-id` header equal to `requestId`. Returns the error for further checks.
 */
export function expectError(res: ApiResponse, status: number, code: string) {
  expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { error: { code } } });
  const { error } = ErrorBodySchema.parse(res.body);
  expect(res.headers.get('x-request-id')).toBe(error.requestId);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return error;
}

/** Bytes an API key's rolling 24-hour window has counted (what its runs were settled to). */
export async function usedBytes(keyId: string): Promise<number> {
  // The window's counts do not depend on the limits; peekUsage needs them only to report what is left.
  const limits = {
    maxBytesBilled: 1e12,
    dailyQueries: 1000,
    dailyBytes: 1e15,
    checksPerMinute: 60,
    pageReadsPerMinute: 120,
    maxRunningJobs: 2,
    jobTimeoutMs: 1e6,
  };
  return (await peekUsage(env, `key:${keyId}`, limits, Date.now())).bytes.used;
}
