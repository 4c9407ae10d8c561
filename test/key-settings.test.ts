// A per-key setting is a migration that adds its api_keys column and one entry in src/auth/key-settings.ts
// (docs/architecture.md, "A new per-key setting"). These tests hold that promise for every entry: the migrations
// made each column, the admin pages create, show, change and reset every one of them, the key read resolves each
// into Principal.limits, and each is enforced (ENFORCED below, typed by the list: a new setting's case is the one
// thing a new setting adds here). The admin CLI's side is test/node/admin-cli.test.mjs.
import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { authenticateApiKey, generateApiKey } from '../src/auth/api-keys';
import { formField } from '../src/features/keys/key-forms';
import { KEY_SETTING_NAMES, KEY_SETTINGS, type KeySettingName } from '../src/auth/key-settings';
import { createKey, page, signedIn } from './admin-client';
import { inputValue } from './oauth-client';
import { seedDemo, TEST_ADMINS } from './seed';

beforeAll(async () => {
  await seedDemo();
});

const Column = z.object({ name: z.string(), type: z.string(), notnull: z.number() });

/** A value the setting's form field reads back exactly, and the stored integer it means. */
function sample(name: KeySettingName, i: number): { typed: string; stored: number } {
  return KEY_SETTINGS[name].unit === 'bytes'
    ? { typed: `${i + 2} GiB`, stored: (i + 2) * 1024 ** 3 }
    : { typed: String(i + 3), stored: i + 3 };
}

async function storedSettings(keyId: string): Promise<Record<string, unknown>> {
  const row = await env.DB.prepare(`SELECT ${KEY_SETTING_NAMES.map((n) => KEY_SETTINGS[n].column).join(', ')} FROM api_keys WHERE id = ?`)
    .bind(keyId)
    .first();
  return z.record(z.string(), z.unknown()).parse(row);
}

describe('per-key settings: one migration and one entry each', () => {
  it('every setting is a nullable INTEGER column of api_keys, and every such column is a setting', async () => {
    const { results } = await env.DB.prepare('SELECT name, type, "notnull" FROM pragma_table_info(\'api_keys\')').all();
    const columns = results.map((r) => Column.parse(r));
    for (const name of KEY_SETTING_NAMES) {
      expect(columns, `api_keys.${KEY_SETTINGS[name].column}`).toContainEqual({
        name: KEY_SETTINGS[name].column,
        type: 'INTEGER',
        notnull: 0,
      });
    }
    // The other nullable integers of api_keys are timestamps; anything else is a setting someone forgot to declare.
    const undeclared = columns
      .filter((c) => c.type === 'INTEGER' && c.notnull === 0 && !c.name.endsWith('_at'))
      .filter((c) => !KEY_SETTING_NAMES.some((n) => KEY_SETTINGS[n].column === c.name));
    expect(undeclared).toEqual([]);
  });

  it('the admin pages create a key with every setting, show each back, and reset each to the default', async () => {
    const admin = await signedIn(TEST_ADMINS.org, '198.51.100.81');
    const typed = Object.fromEntries(KEY_SETTING_NAMES.map((n, i) => [formField(n), sample(n, i).typed]));
    const { id } = await createKey(admin, { name: 'every setting', scope: 'brand:brand_acme', ...typed });
    expect(await storedSettings(id)).toEqual(
      Object.fromEntries(KEY_SETTING_NAMES.map((n, i) => [KEY_SETTINGS[n].column, sample(n, i).stored])),
    );

    const html = await page(admin);
    const row = html.slice(html.indexOf(`<tr id="key-${id}"`));
    for (const [i, n] of KEY_SETTING_NAMES.entries()) {
      expect(inputValue(row, formField(n)), n).toBe(sample(n, i).typed);
    }

    const cleared = Object.fromEntries(KEY_SETTING_NAMES.map((n) => [formField(n), '']));
    const res = await admin.post(`/admin/keys/${id}/limits`, { csrf: inputValue(html, 'csrf'), ...cleared });
    expect(res.status).toBe(303);
    expect(Object.values(await storedSettings(id))).toEqual(KEY_SETTING_NAMES.map(() => null));
  });

  it('the per-minute rates are enforced from the key row: the page sets them, the meter reads them', async () => {
    const admin = await signedIn(TEST_ADMINS.org, '198.51.100.82');
    const { secret } = await createKey(admin, { name: 'slow pages', scope: 'brand:brand_acme', pageReadsPerMinute: '4' });
    const { meterRate } = await import('../src/usage/usage');
    // The principal the Worker serves the key as: its one read of the key, every setting in `limits`.
    const principal = await authenticateApiKey(env, secret, Date.now());
    expect(await meterRate(env, principal, 'pages')).toBe(4);
    expect(await meterRate(env, principal, 'checks')).toBe(Number(env.DEFAULT_CHECKS_PER_MINUTE));
  });
});

const ORDERS = '`service-v1.acme.fact__orders`';

/** A fresh brand_acme key (so a fresh usage window) whose one setting `name` is `value`; the others are the defaults. */
async function keyWith(name: KeySettingName, value: number): Promise<string> {
  const key = await generateApiKey();
  await env.DB.prepare(
    `INSERT INTO api_keys (id, name, prefix, secret_hash, brand_id, ${KEY_SETTINGS[name].column}, created_at) VALUES (?, ?, ?, ?, ?, ?, 0)`,
  )
    .bind(key.id, `enforced ${name}`, key.prefix, key.secretHash, 'brand_acme', value)
    .run();
  return key.secret;
}

async function post(secret: string, path: string, body: Record<string, unknown>) {
  const res = await SELF.fetch(`http://api.test${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: z.record(z.string(), z.unknown()).parse(await res.json()) };
}

const Refusal = z.object({ error: z.object({ code: z.string(), details: z.record(z.string(), z.unknown()).optional() }) });

/** A SELECT of its own text, so that no run is a query-cache hit billing nothing. */
const ownSql = (cols = 'revenue') => `SELECT ${cols} FROM ${ORDERS} /* ${crypto.randomUUID()} */`;

/**
 * How each setting is enforced, seen from outside: a key whose setting is set low, and the request it then refuses.
 * Typed by the list of settings, so a setting added to KEY_SETTINGS without a case here fails the type check: a
 * new setting is done when a request shows it enforced, not when the console shows it stored.
 */
const ENFORCED: Record<
  KeySettingName,
  { value: number; refused: (secret: string) => Promise<{ status: number; code: string; limit?: unknown }> }
> = {
  dailyQueries: {
    value: 1,
    refused: async (secret) => {
      expect((await post(secret, '/v1/data/query', { sql: ownSql() })).status).toBe(200);
      return refusalOf(await post(secret, '/v1/data/query', { sql: ownSql() }));
    },
  },
  dailyBytes: {
    value: 1,
    refused: async (secret) => {
      // The first run is let in (nothing counted yet) and counts its bytes; the next finds the budget spent.
      expect((await post(secret, '/v1/data/query', { sql: ownSql() })).status).toBe(200);
      return refusalOf(await post(secret, '/v1/data/query', { sql: ownSql() }));
    },
  },
  maxBytesBilled: {
    value: 1000,
    refused: async (secret) => refusalOf(await post(secret, '/v1/data/query', { sql: ownSql() })),
  },
  checksPerMinute: {
    value: 1,
    refused: async (secret) => {
      expect((await post(secret, '/v1/data/query', { sql: ownSql(), dryRun: true })).status).toBe(200);
      return refusalOf(await post(secret, '/v1/data/query', { sql: ownSql(), dryRun: true }));
    },
  },
  pageReadsPerMinute: {
    value: 1,
    refused: async (secret) => {
      // About 12,500 rows over ten days: more than ROW_CAP (10,000), so a page follows.
      const sql = `SELECT order_id FROM ${ORDERS} WHERE order_date >= DATE_SUB(CURRENT_DATE(), INTERVAL 10 DAY) /* ${crypto.randomUUID()} */`;
      const run = await post(secret, '/v1/data/query', { sql });
      const cursor = z.object({ nextCursor: z.string() }).parse(run.body).nextCursor;
      expect((await post(secret, '/v1/data/query/page', { cursor })).status).toBe(200);
      return refusalOf(await post(secret, '/v1/data/query/page', { cursor }));
    },
  },
  maxRunningJobs: {
    value: 1,
    refused: async (secret) => {
      // A long job held running by the local warehouse (slowJob), then a second: refused before it is counted.
      const marker = `running${crypto.randomUUID().slice(0, 8)}`;
      const spec = { kind: 'slowJob', ms: 120_000, match: { op: 'insert', sql: marker, dryRun: false } };
      const fault = z
        .object({ id: z.string() })
        .parse(await (await fetch(`${env.BIGQUERY_API_BASE}/__faults`, { method: 'POST', body: JSON.stringify(spec) })).json());
      const first = await asyncRun(secret, `SELECT order_id FROM ${ORDERS} /* ${marker} */`);
      expect(first.status).toBe(202);
      const refusal = refusalOf(await asyncRun(secret, ownSql()));
      await SELF.fetch(`http://api.test${first.headers.get('location')}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${secret}` },
      });
      await fetch(`${env.BIGQUERY_API_BASE}/__faults/${fault.id}`, { method: 'DELETE' });
      return refusal;
    },
  },
  jobTimeoutMs: {
    value: 1,
    refused: async (secret) => {
      // Sent to BigQuery as jobTimeoutMs: a job slower than it is stopped there and ends expired.
      const marker = `timeout${crypto.randomUUID().slice(0, 8)}`;
      const spec = { kind: 'slowJob', ms: 60_000, match: { op: 'insert', sql: marker, dryRun: false } };
      await fetch(`${env.BIGQUERY_API_BASE}/__faults`, { method: 'POST', body: JSON.stringify(spec) });
      const started = await asyncRun(secret, `SELECT order_id FROM ${ORDERS} /* ${marker} */`);
      const at = started.headers.get('location') ?? '';
      for (let i = 0; i < 60; i++) {
        const res = await SELF.fetch(`http://api.test${at}`, { headers: { authorization: `Bearer ${secret}` } });
        const job = z.object({ status: z.string(), error: z.object({ code: z.string() }).optional() }).parse(await res.json());
        if (job.error) return { status: res.status, code: job.error.code };
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error('the job did not end');
    },
  },
};

/** An asynchronous run (`Prefer: respond-async`). */
async function asyncRun(secret: string, sql: string) {
  const res = await SELF.fetch('http://api.test/v1/data/query', {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', prefer: 'respond-async' },
    body: JSON.stringify({ sql }),
  });
  return { status: res.status, headers: res.headers, body: z.record(z.string(), z.unknown()).parse(await res.json()) };
}

/** What refused the request, and which limit (USAGE_LIMIT_EXCEEDED names it in details.limit). */
function refusalOf(res: { status: number; body: unknown }) {
  const { error } = Refusal.parse(res.body);
  return { status: res.status, code: error.code, limit: error.details?.limit };
}

const EXPECTED: Record<KeySettingName, { status: number; code: string; limit?: unknown }> = {
  dailyQueries: { status: 429, code: 'USAGE_LIMIT_EXCEEDED', limit: 'runs' },
  dailyBytes: { status: 429, code: 'USAGE_LIMIT_EXCEEDED', limit: 'bytes' },
  maxBytesBilled: { status: 400, code: 'QUERY_TOO_EXPENSIVE', limit: undefined },
  checksPerMinute: { status: 429, code: 'USAGE_LIMIT_EXCEEDED', limit: 'checks' },
  pageReadsPerMinute: { status: 429, code: 'USAGE_LIMIT_EXCEEDED', limit: 'pages' },
  maxRunningJobs: { status: 429, code: 'USAGE_LIMIT_EXCEEDED', limit: 'runningJobs' },
  jobTimeoutMs: { status: 200, code: 'WAREHOUSE_TIMEOUT' },
};

describe('per-key settings: each one enforced from the one read of the key', () => {
  it('the key read resolves every setting into the principal: the own value, else the default', async () => {
    for (const [i, name] of KEY_SETTING_NAMES.entries()) {
      const own = await authenticateApiKey(env, await keyWith(name, 1000 + i), Date.now());
      expect(own.limits[name], name).toBe(1000 + i);
      for (const other of KEY_SETTING_NAMES.filter((n) => n !== name)) {
        expect(own.limits[other], `${other} beside ${name}`).toBe(Number(env[KEY_SETTINGS[other].default]));
      }
    }
  });

  it.each(KEY_SETTING_NAMES)("%s: a request past the key's own value is refused", async (name) => {
    const secret = await keyWith(name, ENFORCED[name].value);
    expect(await ENFORCED[name].refused(secret)).toEqual(EXPECTED[name]);
  });
});
