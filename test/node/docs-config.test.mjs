// docs/configuration.md's table is the configuration reference: it must name exactly what the Worker reads, i.e.
// every binding and [vars] entry of wrangler.toml and every secret of src/env.ts, with each variable's default as
// wrangler.toml sets it. A variable added to one and not the other fails here.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { unstable_readConfig } from 'wrangler';
import { ROOT } from '../../scripts/lib/import-ts.mjs';

/** The rows of the table: name (first cell), kind (second) and default (third), as written. */
async function documented() {
  const text = await readFile(join(ROOT, 'docs', 'configuration.md'), 'utf8');
  /** @type {Map<string, { kind: string, default: string }>} */
  const rows = new Map();
  for (const line of text.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const name = /^`([A-Z][A-Z0-9_]*)`$/.exec(cells[1] ?? '')?.[1];
    if (line.startsWith('|') && name) rows.set(name, { kind: cells[2] ?? '', default: cells[3] ?? '' });
  }
  return rows;
}

/** What wrangler.toml declares: bindings by name, and vars with their values. */
function declared() {
  const config = unstable_readConfig({ config: join(ROOT, 'wrangler.toml') }, {});
  const bindings = [
    ...config.d1_databases.map((d) => d.binding),
    ...config.kv_namespaces.map((k) => k.binding),
    ...config.r2_buckets.map((b) => b.binding),
    ...config.durable_objects.bindings.map((d) => d.name),
    ...(config.queues?.producers ?? []).map((q) => q.binding),
    ...(config.ratelimits ?? []).map((r) => r.name),
    ...(config.assets?.binding ? [config.assets.binding] : []),
  ];
  return { bindings, vars: /** @type {Record<string, unknown>} */ (config.vars) };
}

/** The secrets: the keys of `interface Secrets` in src/env.ts. */
async function secrets() {
  const text = await readFile(join(ROOT, 'src', 'env.ts'), 'utf8');
  const body = /export interface Secrets \{([^}]*)\}/.exec(text)?.[1] ?? '';
  return [...body.matchAll(/^\s*([A-Z][A-Z0-9_]*)\??:/gm)].map((m) => m[1] ?? '');
}

describe('docs/configuration.md', () => {
  it('names every binding, variable and secret the Worker reads, and nothing else', async () => {
    const rows = await documented();
    const { bindings, vars } = declared();
    const expected = [...bindings, ...Object.keys(vars), ...(await secrets())];
    expect(expected.length).toBeGreaterThan(20);
    expect([...rows.keys()].sort()).toEqual([...new Set(expected)].sort());
  });

  it("gives each variable wrangler.toml's default", async () => {
    const rows = await documented();
    const { vars } = declared();
    for (const [name, value] of Object.entries(vars)) {
      const row = rows.get(name);
      expect(row?.kind, name).toBe('var');
      const shown = value === '' ? 'empty' : /^`([^`]*)`/.exec(row?.default ?? '')?.[1];
      expect(shown, name).toBe(value === '' ? 'empty' : String(value));
      if (value === '') expect(row?.default, name).toBe('empty');
    }
  });

  it('marks each secret as one', async () => {
    const rows = await documented();
    for (const name of await secrets()) expect(rows.get(name)?.kind, name).toMatch(/^secret/);
  });
});
