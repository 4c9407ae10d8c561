// A per-key setting is a migration that adds its api_keys column and one entry in src/auth/key-settings.ts
// (docs/architecture.md, "A new per-key setting"). These tests hold that promise for every entry, so a setting added
// that way is proved by them without a new test: the migrations made each column, and the admin pages create,
// show, change and reset every one of them. The admin CLI's side is test/node/admin-cli.test.mjs.
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
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
    const { id } = await createKey(admin, { name: 'slow pages', scope: 'brand:brand_acme', pageReadsPerMinute: '4' });
    const { meterRate } = await import('../src/usage/usage');
    const principal = {
      kind: 'key' as const,
      id,
      label: 'slow pages',
      orgId: 'org_demo',
      scope: 'brand' as const,
      brandIds: ['brand_acme'],
      limits: { maxBytesBilled: 1, dailyQueries: 1, dailyBytes: 1 },
    };
    expect(await meterRate(env, principal, 'pages')).toBe(4);
    expect(await meterRate(env, principal, 'checks')).toBe(Number(env.DEFAULT_CHECKS_PER_MINUTE));
  });
});
