// Lets the Node tooling (admin CLI, `npm run dev`) call the Worker's own TypeScript modules instead of
// re-implementing them: key generation, password hashing and the demo seed must be byte-for-byte what the
// Worker checks, so there is exactly one implementation of each.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

/** Repository root (scripts/lib/ is two levels down). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Bundles the named exports of repository modules into one ES module and imports it.
 * `modules` maps a path relative to the repository root to the names it should export.
 * The bundle is imported from a data: URL, so nothing is written to disk and there is no stale cache.
 * @param {Record<string, string[]>} modules
 * @returns {Promise<Record<string, any>>}
 */
export async function importWorkerModules(modules) {
  const contents = Object.entries(modules)
    .map(([path, names]) => `export { ${names.join(', ')} } from ${JSON.stringify(`./${path}`)};`)
    .join('\n');
  const out = await build({
    stdin: { contents, resolveDir: ROOT, sourcefile: 'worker-modules.ts', loader: 'ts' },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    target: 'node20',
    logLevel: 'silent',
  });
  const file = out.outputFiles[0];
  if (!file) throw new Error('esbuild produced no output');
  return import(`data:text/javascript;base64,${Buffer.from(file.contents).toString('base64')}`);
}
