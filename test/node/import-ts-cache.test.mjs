// scripts/lib/import-ts.mjs keeps bundles between processes: a kept bundle is used only while every file esbuild read
// for it is unchanged, the entry's imports included, so an edit is never answered with the old code.
import { mkdir, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BUNDLE_CACHE_DIR, bundleTs, importTs, ROOT } from '../../scripts/lib/import-ts.mjs';

const dir = join(ROOT, 'node_modules', '.cache', `import-ts-test-${process.pid}-${Date.now()}`);
const entry = relative(ROOT, join(dir, 'entry.ts'));
const dependency = relative(ROOT, join(dir, 'dependency.ts'));

/** Writes a file as an edit made a minute ago (a bundle is not kept from files changed just before or during its build). */
async function writeEarlier(name, text) {
  await writeFile(join(dir, name), text);
  const minuteAgo = new Date(Date.now() - 60_000);
  await utimes(join(dir, name), minuteAgo, minuteAgo);
}

beforeAll(async () => {
  await mkdir(dir, { recursive: true });
  await writeEarlier('entry.ts', "import { base } from './dependency';\nexport const value: number = base * 10;\n");
  await writeEarlier('dependency.ts', 'export const base = 1;\n');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The kept bundle (its file and contents) built from this test's entry. */
async function keptFor(path) {
  for (const name of await readdir(BUNDLE_CACHE_DIR)) {
    if (!name.endsWith('.json')) continue;
    const kept = JSON.parse(await readFile(join(BUNDLE_CACHE_DIR, name), 'utf8').catch(() => '{}'));
    if (kept.inputs && path in kept.inputs) return { file: join(BUNDLE_CACHE_DIR, name), kept };
  }
  return null;
}

it('keeps a bundle with a hash of each file it read, uses it unchanged, and builds again when an import changes', async () => {
  expect((await importTs({ entry })).value).toBe(10);
  const first = await keptFor(entry);
  expect(first).not.toBeNull();
  // The files esbuild read, and tsconfig.json, which it reads for its settings without listing it.
  expect(Object.keys(first?.kept.inputs ?? {}).sort()).toEqual([dependency, entry, 'tsconfig.json'].sort());

  // Unchanged: the kept copy is the answer, not rewritten.
  const before = (await stat(first?.file ?? '')).mtimeMs;
  expect(await bundleTs({ entry })).toBe(first?.kept.text);
  expect((await stat(first?.file ?? '')).mtimeMs).toBe(before);

  // The entry's import changes (same length, so only its bytes tell): the bundle is built again from the new code.
  await writeEarlier('dependency.ts', 'export const base = 2;\n');
  expect((await importTs({ entry })).value).toBe(20);
  expect((await keptFor(entry))?.kept.text).toContain('base = 2');

  // Changed this very moment (it may still be being written): built from it, but not kept.
  await writeFile(join(dir, 'dependency.ts'), 'export const base = 3;\n');
  expect((await importTs({ entry })).value).toBe(30);
  expect((await keptFor(entry))?.kept.text).toContain('base = 2');
  expect((await importTs({ entry })).value).toBe(30);
});
