// Changing an API key's limits from /admin and seeing its rolling-24 h usage there. Limits are proved to take
// effect through the same path a query run takes: authenticateApiKey builds the principal from the row, and the
// real usage Durable Object refuses the run over the new limit.
import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { authenticateApiKey, defaultLimits } from '../src/auth/api-keys';
import { formatBytes } from '../src/features/keys/units';
import { ApiError } from '../src/errors';
import { DEMO_KEY_IDS } from '../src/seed/demo-tenants';
import { acquireRun, settleRun } from '../src/usage/usage';
import { createKey as createKeyThroughForm, page, signedIn as signedInAt } from './admin-client';
import { inputValue, location, ORIGIN, TestBrowser } from './oauth-client';
import { seedDemo, TEST_ADMINS, TEST_KEYS, WAIT_UNTIL_WORK } from './seed';

const GIB = 1024 ** 3;

beforeAll(async () => {
  await seedDemo();
});

const signedIn = (admin: { email: string; password: string }) => signedInAt(admin, '198.51.100.80');

const LimitsRow = z.object({
  daily_query_limit: z.number().nullable(),
  daily_bytes_limit: z.number().nullable(),
  max_bytes_billed: z.number().nullable(),
});

async function limitsRow(keyId: string) {
  return LimitsRow.parse(
    await env.DB.prepare('SELECT daily_query_limit, daily_bytes_limit, max_bytes_billed FROM api_keys WHERE id = ?').bind(keyId).first(),
  );
}

let keyCount = 0;

/** A fresh key made through the create form (so each test has its own usage window); returns its id and secret. */
async function createKey(browser: TestBrowser, scope: string): Promise<{ id: string; secret: string; name: string }> {
  const name = `limits test ${++keyCount}`;
  const { id, secret } = await createKeyThroughForm(browser, { name, scope });
  return { id, secret, name };
}

/** The HTML of one key's row on the keys list. */
function keyRow(html: string, keyId: string): string {
  const start = html.indexOf(`<tr id="key-${keyId}"`);
  expect(start).toBeGreaterThanOrEqual(0);
  return html.slice(start, html.indexOf('</tr>', start));
}

async function expectRunRefused(run: Promise<unknown>): Promise<ApiError> {
  const err = await run.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  if (!(err instanceof ApiError)) throw new Error('unreachable');
  return err;
}

describe('changing a key’s limits', () => {
  it('saves new limits, which the key’s next request runs under: a 1-query key is refused its 2nd run', async () => {
    const admin = await signedIn(TEST_ADMINS.org);
    const key = await createKey(admin, 'brand:brand_acme');
    const before = await authenticateApiKey(env, key.secret, Date.now());
    expect(before.limits).toEqual(defaultLimits(env));

    const res = await admin.post(`/admin/keys/${key.id}/limits`, {
      csrf: inputValue(await page(admin), 'csrf'),
      dailyQueries: '1',
      dailyBytes: '2.5',
      maxBytes: '0.25',
    });
    expect(res.status).toBe(303);
    expect(location(res).search).toBe('?notice=key-limits-saved');
    expect(await limitsRow(key.id)).toEqual({ daily_query_limit: 1, daily_bytes_limit: 2.5 * GIB, max_bytes_billed: GIB / 4 });

    const principal = await authenticateApiKey(env, key.secret, Date.now());
    expect(principal.limits).toEqual({
      dailyQueries: 1,
      dailyBytes: 2.5 * GIB,
      maxBytesBilled: GIB / 4,
      // The meter rates the page left alone: the defaults, read with the key (Principal.limits holds every setting).
      checksPerMinute: Number(env.DEFAULT_CHECKS_PER_MINUTE),
      pageReadsPerMinute: Number(env.DEFAULT_PAGE_READS_PER_MINUTE),
      maxRunningJobs: Number(env.DEFAULT_MAX_RUNNING_JOBS),
      jobTimeoutMs: Number(env.DEFAULT_JOB_TIMEOUT_MS),
    });
    const now = Date.now();
    const first = await acquireRun(env, principal, now, { consume: true });
    await settleRun(env, principal, first, { bytesBilled: 3 * 1024 ** 2 });
    const refused = await expectRunRefused(acquireRun(env, principal, now + 1000, { consume: true }));
    expect(refused.code).toBe('USAGE_LIMIT_EXCEEDED');
    expect(refused.status).toBe(429);
    expect(refused.details).toMatchObject({ limit: 'runs', limitValue: 1, used: 1 });

    // The list: the notice, the new limits, the form filled with them, and the usage of the window.
    const html = await (await admin.get(`${location(res).pathname}${location(res).search}`)).text();
    expect(html).toContain('<p class="notice" role="status">The key&#39;s limits were saved.');
    const row = keyRow(html, key.id);
    expect(row).toContain('1 queries / 24 h');
    expect(row).toContain('2.5 GiB / 24 h');
    expect(row).toContain('0.25 GiB per query');
    expect(inputValue(row, 'dailyQueries')).toBe('1');
    expect(inputValue(row, 'dailyBytes')).toBe('2.5 GiB');
    expect(inputValue(row, 'maxBytes')).toBe('0.25 GiB');
    expect(row).toContain('1 / 1 queries');
    expect(row).toContain('3 MiB / 2.5 GiB billed');
    expect(row).toMatch(/Query limit reached; runs again at <time datetime="[^"]+">/);
  });

  it.each([
    { typed: '0.5 GiB', bytes: 2 ** 29, shown: '0.5 GiB' },
    { typed: '20,000,000 bytes', bytes: 20_000_000, shown: '20,000,000 bytes' },
    { typed: '20000000 B', bytes: 20_000_000, shown: '20,000,000 bytes' },
    { typed: '512 MiB', bytes: 2 ** 29, shown: '0.5 GiB' },
    { typed: '1.5 tib', bytes: 1.5 * 2 ** 40, shown: '1.5 TiB' },
    { typed: '0.001', bytes: 1_073_742, shown: '1,073,742 bytes' },
  ])(
    'a byte limit typed as "$typed" is stored as $bytes bytes and shown back as "$shown", which saves unchanged',
    async ({ typed, bytes, shown }) => {
      const admin = await signedIn(TEST_ADMINS.org);
      const key = await createKey(admin, 'org:org_demo');
      const save = async (value: string) =>
        admin.post(`/admin/keys/${key.id}/limits`, {
          csrf: inputValue(await page(admin), 'csrf'),
          dailyQueries: '',
          dailyBytes: value,
          maxBytes: value,
        });
      expect((await save(typed)).status).toBe(303);
      expect(await limitsRow(key.id)).toEqual({ daily_query_limit: null, daily_bytes_limit: bytes, max_bytes_billed: bytes });
      const row = keyRow(await page(admin), key.id);
      expect(inputValue(row, 'dailyBytes')).toBe(shown);
      expect(inputValue(row, 'maxBytes')).toBe(shown);
      expect(row).toContain(`<li>${shown} / 24 h</li>`);
      expect(row).toContain(`<li>${shown} per query</li>`);
      // Saving the form as shown changes nothing.
      expect((await save(inputValue(row, 'dailyBytes'))).status).toBe(303);
      expect(await limitsRow(key.id)).toEqual({ daily_query_limit: null, daily_bytes_limit: bytes, max_bytes_billed: bytes });
    },
  );

  it('a key limited to 1 query a day through the form is refused its 2nd run of POST /v1/data/query with 429', async () => {
    const admin = await signedIn(TEST_ADMINS.brand);
    const key = await createKey(admin, 'brand:brand_acme');
    await admin.post(`/admin/keys/${key.id}/limits`, { csrf: inputValue(await page(admin), 'csrf'), dailyQueries: '1' });
    const run = () =>
      SELF.fetch(`${ORIGIN}/v1/data/query`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ sql: 'SELECT COUNT(*) AS n FROM `service-v1.acme.fact__orders`' }),
      });
    const first = await run();
    expect(first.status).toBe(200);
    expect(first.headers.get('RateLimit-Limit')).toBe('1');
    expect(first.headers.get('RateLimit-Remaining')).toBe('0');
    const billed = z.object({ stats: z.object({ totalBytesBilled: z.number() }) }).parse(await first.json()).stats.totalBytesBilled;
    const second = await run();
    expect(second.status).toBe(429);
    expect(Number(second.headers.get('Retry-After'))).toBeGreaterThan(0);
    expect(await second.json()).toMatchObject({
      error: { code: 'USAGE_LIMIT_EXCEEDED', details: { limit: 'runs', limitValue: 1, used: 1 } },
    });

    // The page shows the run counted (bytes are settled in waitUntil, so wait for them) and the block.
    const row = await vi.waitFor(async () => {
      const shown = keyRow(await page(admin), key.id);
      expect(shown).toContain(`${formatBytes(billed)} / 100 GiB billed`);
      return shown;
    }, WAIT_UNTIL_WORK);
    expect(row).toContain('1 / 1 queries');
    expect(row).toContain(`${formatBytes(billed)} / 100 GiB billed`);
    expect(row).toContain('Query limit reached; runs again at');
  });

  it('clears limits back to the defaults with empty fields, and can raise a limit that blocked the key', async () => {
    const admin = await signedIn(TEST_ADMINS.brand);
    const key = await createKey(admin, 'brand:brand_acme');
    const csrf = inputValue(await page(admin), 'csrf');
    await admin.post(`/admin/keys/${key.id}/limits`, { csrf, dailyQueries: '1', dailyBytes: '1', maxBytes: '1' });
    const now = Date.now();
    await acquireRun(env, await authenticateApiKey(env, key.secret, now), now, { consume: true });
    expect((await expectRunRefused(acquireRun(env, await authenticateApiKey(env, key.secret, now), now, { consume: true }))).code).toBe(
      'USAGE_LIMIT_EXCEEDED',
    );

    // Raising one limit and clearing the others.
    await admin.post(`/admin/keys/${key.id}/limits`, { csrf, dailyQueries: '2', dailyBytes: ' ', maxBytes: '' });
    expect(await limitsRow(key.id)).toEqual({ daily_query_limit: 2, daily_bytes_limit: null, max_bytes_billed: null });
    const raised = await authenticateApiKey(env, key.secret, now);
    expect(raised.limits).toEqual({ ...defaultLimits(env), dailyQueries: 2 });
    await expect(acquireRun(env, raised, now, { consume: true })).resolves.toMatchObject({
      headers: { 'RateLimit-Limit': '2', 'RateLimit-Remaining': '0' },
    });

    await admin.post(`/admin/keys/${key.id}/limits`, { csrf, dailyQueries: '', dailyBytes: '', maxBytes: '' });
    expect(await limitsRow(key.id)).toEqual({ daily_query_limit: null, daily_bytes_limit: null, max_bytes_billed: null });
    expect((await authenticateApiKey(env, key.secret, now)).limits).toEqual(defaultLimits(env));
    const row = keyRow(await page(admin), key.id);
    expect(row).toContain('1,000 (default) queries / 24 h');
    expect(row).toContain('2 / 1,000 queries');
    expect(inputValue(row, 'dailyQueries')).toBe('');
  });

  it('offers the form only for keys the user administers, and refuses a key outside their reach', async () => {
    const brandAdmin = await signedIn(TEST_ADMINS.brand);
    const html = await page(brandAdmin);
    expect(html).toContain(`action="/admin/keys/${DEMO_KEY_IDS.brand}/limits"`);
    expect(html).not.toContain(`action="/admin/keys/${DEMO_KEY_IDS.org}/limits"`);
    expect(html).not.toContain(`action="/admin/keys/${DEMO_KEY_IDS.other}/limits"`);
    const csrf = inputValue(html, 'csrf');
    const before = { org: await limitsRow(DEMO_KEY_IDS.org), other: await limitsRow(DEMO_KEY_IDS.other) };
    for (const id of [DEMO_KEY_IDS.org, DEMO_KEY_IDS.other, 'key_does_not_exist']) {
      const res = await brandAdmin.post(`/admin/keys/${id}/limits`, { csrf, dailyQueries: '1' });
      expect(res.status).toBe(303);
      expect(location(res).search).toBe('?notice=key-not-found');
    }
    expect(await limitsRow(DEMO_KEY_IDS.org)).toEqual(before.org);
    expect(await limitsRow(DEMO_KEY_IDS.other)).toEqual(before.other);
    expect((await authenticateApiKey(env, TEST_KEYS.org, Date.now())).limits.dailyQueries).not.toBe(1);

    // A revoked key keeps its limits and has no form.
    const orgAdmin = await signedIn(TEST_ADMINS.org);
    const key = await createKey(orgAdmin, 'org:org_demo');
    const orgCsrf = inputValue(await page(orgAdmin), 'csrf');
    await orgAdmin.post(`/admin/keys/${key.id}/revoke`, { csrf: orgCsrf, confirm: 'yes' });
    const res = await orgAdmin.post(`/admin/keys/${key.id}/limits`, { csrf: orgCsrf, dailyQueries: '5' });
    expect(location(res).search).toBe('?notice=key-not-found');
    expect(await limitsRow(key.id)).toEqual({ daily_query_limit: null, daily_bytes_limit: null, max_bytes_billed: null });
    const row = keyRow(await page(orgAdmin), key.id);
    expect(row).not.toContain('/limits"');
    expect(row).toContain('<span class="muted">revoked</span>');
  });

  it('refuses a save without the session’s CSRF token or from another origin', async () => {
    const admin = await signedIn(TEST_ADMINS.org);
    const key = await createKey(admin, 'org:org_demo');
    const csrf = inputValue(await page(admin), 'csrf');
    const otherCsrf = inputValue(await page(await signedIn(TEST_ADMINS.org)), 'csrf');
    const path = `/admin/keys/${key.id}/limits`;
    const attempts = [
      admin.post(path, { dailyQueries: '1' }),
      admin.post(path, { csrf: 'a'.repeat(64), dailyQueries: '1' }),
      admin.post(path, { csrf: otherCsrf, dailyQueries: '1' }),
      admin.post(path, { csrf, dailyQueries: '1' }, 'https://evil.example'),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(403);
      expect(await res.text()).toContain('Form refused');
    }
    expect(await limitsRow(key.id)).toEqual({ daily_query_limit: null, daily_bytes_limit: null, max_bytes_billed: null });
    // Signed out: back to the sign-in page, nothing saved.
    const anonymous = await new TestBrowser().post(path, { csrf, dailyQueries: '1' });
    expect(location(anonymous).pathname).toBe('/admin/login');
    expect((await limitsRow(key.id)).daily_query_limit).toBeNull();
  });

  it.each([
    { field: 'dailyQueries', value: '0', message: 'Query runs in 24 h: must be greater than 0' },
    { field: 'dailyQueries', value: '-3', message: 'Query runs in 24 h: must be greater than 0' },
    { field: 'dailyQueries', value: '2.5', message: 'Query runs in 24 h: must be a whole number' },
    { field: 'dailyQueries', value: 'ten', message: 'Query runs in 24 h: must be a number' },
    { field: 'dailyQueries', value: '9007199254740993', message: 'Query runs in 24 h: must be at most 1,000,000,000' },
    { field: 'dailyBytes', value: '0', message: 'Bytes billed in 24 h: must be greater than 0' },
    { field: 'dailyBytes', value: '0 TiB', message: 'Bytes billed in 24 h: must be greater than 0' },
    { field: 'dailyBytes', value: '0.0000000001', message: 'Bytes billed in 24 h: must be at least 1 byte' },
    { field: 'dailyBytes', value: '1e-12', message: 'Bytes billed in 24 h: must be a number with an optional unit' },
    { field: 'dailyBytes', value: 'Infinity', message: 'Bytes billed in 24 h: must be a number with an optional unit' },
    { field: 'dailyBytes', value: '-1 GiB', message: 'Bytes billed in 24 h: must be a number with an optional unit' },
    { field: 'dailyBytes', value: '5 parsecs', message: 'Bytes billed in 24 h: unknown unit “parsecs”; use bytes, KiB, MiB, GiB or TiB' },
    { field: 'maxBytes', value: '2000000', message: 'Max bytes billed by one query: must be at most 1,024 TiB' },
    { field: 'maxBytes', value: '1,5', message: 'Max bytes billed by one query: must be a number with an optional unit' },
  ])('refuses $field = "$value" with "$message", re-rendering the form with the values typed', async ({ field, value, message }) => {
    const admin = await signedIn(TEST_ADMINS.org);
    const key = await createKey(admin, 'org:org_demo');
    await admin.post(`/admin/keys/${key.id}/limits`, { csrf: inputValue(await page(admin), 'csrf'), dailyQueries: '7' });
    const typed = { dailyQueries: '9', dailyBytes: '3 GiB', maxBytes: '1', [field]: value };
    const res = await admin.post(`/admin/keys/${key.id}/limits`, { csrf: inputValue(await page(admin), 'csrf'), ...typed });
    expect(res.status).toBe(400);
    const row = keyRow(await res.text(), key.id);
    expect(row).toContain('<details open="">');
    expect(row).toMatch(
      new RegExp(
        `<p class="alert" role="alert" id="limits-${key.id}-error">Not saved\\. ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`,
      ),
    );
    const input = new RegExp(
      `<input id="limits-${key.id}-${field}" name="${field}" value="[^"]*" aria-invalid="true" aria-describedby="limits-${key.id}-error" autofocus=""`,
    );
    expect(row).toMatch(input);
    for (const [name, v] of Object.entries(typed)) expect(inputValue(row, name)).toBe(v);
    expect(await limitsRow(key.id)).toEqual({ daily_query_limit: 7, daily_bytes_limit: null, max_bytes_billed: null });
  });
});

describe('usage on the keys list', () => {
  it('shows every live key’s usage against the limits that apply to it, and labels each field', async () => {
    const admin = await signedIn(TEST_ADMINS.org);
    const key = await createKey(admin, 'brand:brand_globex');
    const principal = await authenticateApiKey(env, key.secret, Date.now());
    for (const bytesBilled of [GIB, GIB / 2]) {
      const ticket = await acquireRun(env, principal, Date.now(), { consume: true });
      await settleRun(env, principal, ticket, { bytesBilled });
    }
    const html = await page(admin);
    expect(html).toContain('<th scope="col">Used, last 24 h</th>');
    const row = keyRow(html, key.id);
    expect(row).toContain(
      '<td data-label="Used, last 24 h"><ul class="plain"><li>2 / 1,000 queries</li><li>1.5 GiB / 100 GiB billed</li></ul>',
    );
    expect(row).not.toContain('limit reached');
    // Every input of the change-limits form has a label; the summary and the button name the key.
    // Each field's name says which key it belongs to, so no two fields on the page share a name.
    for (const [field, label] of [
      ['dailyQueries', 'Query runs in 24 h'],
      ['dailyBytes', 'Bytes billed in 24 h'],
      ['maxBytes', 'Max bytes billed by one query'],
    ]) {
      expect(row).toContain(`<label for="limits-${key.id}-${field}">${label}<span class="visually-hidden"> for key ${key.name}</span>`);
    }
    expect(row).toContain(`<summary>Change limits<span class="visually-hidden"> of key ${key.name}</span></summary>`);
    expect(row).toContain(`aria-label="Save limits of key ${key.name}"`);
    // The demo keys are listed with their own (empty) windows.
    expect(keyRow(html, DEMO_KEY_IDS.brand)).toContain('0 / 1,000 queries');
  });

  it('shows "usage unavailable" for a key whose usage object fails, and still renders the page', async () => {
    const admin = await signedIn(TEST_ADMINS.org);
    const broken = await createKey(admin, 'org:org_demo');
    // A limit written by hand in SQL that the usage object refuses (budgets must be integers): its peek throws,
    // as it would if the object were unreachable.
    await env.DB.prepare('UPDATE api_keys SET daily_query_limit = 1.5 WHERE id = ?').bind(broken.id).run();
    const res = await admin.get('/admin');
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(keyRow(html, broken.id)).toContain('<td data-label="Used, last 24 h"><span class="muted">usage unavailable</span></td>');
    expect(keyRow(html, DEMO_KEY_IDS.org)).toContain('0 / 1,000 queries');
    expect(html).toContain('Create an API key');
  });
});
