// The one esbuild loader of the Node tooling. The admin CLI, `npm run dev`, the benches and the Node tests call
// the Worker's own TypeScript modules instead of re-implementing them: key generation, password hashing, the
// demo seed, the SQL guard must be byte-for-byte what the Worker runs, so there is exactly one implementation
// of each, bundled here on demand.
import { build } from 'esbuild';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (scripts/lib/ is two levels down). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * What to bundle: one entry file, or the named exports of repository modules (path relative to the
 * repository root -> names) gathered into one module.
 * @typedef {{ entry: string } | { exports: Record<string, string[]> }} BundleInput
 */

/**
 * `.wasm` imports become a WebAssembly.Module compiled from the file (in Node; the Worker gets the same module
 * from wrangler as a CompiledWasm import).
 * @type {import('esbuild').Plugin}
 */
const compiledWasm = {
  name: 'compiled-wasm',
  setup(b) {
    b.onResolve({ filter: /\.wasm$/ }, (a) => ({ path: join(a.resolveDir, a.path), namespace: 'compiled-wasm' }));
    b.onLoad({ filter: /.*/, namespace: 'compiled-wasm' }, (a) => ({
      contents: `import { readFileSync } from 'node:fs'; export default new WebAssembly.Module(readFileSync(${JSON.stringify(a.path)}));`,
      loader: 'js',
    }));
  },
};

/**
 * Bundles repository TypeScript into one ES module and returns its text.
 * @param {BundleInput} what
 * @param {{ platform?: 'node' | 'neutral', external?: string[] }} [opts] platform node (the default) may use
 *   node: built-ins and .wasm; neutral is for code that runs in workerd (Miniflare), with `external` left to it.
 * @returns {Promise<string>}
 */
export async function bundleTs(what, opts = {}) {
  const platform = opts.platform ?? 'node';
  const input =
    'entry' in what
      ? { entryPoints: [join(ROOT, what.entry)] }
      : {
          stdin: {
            contents: Object.entries(what.exports)
              .map(([path, names]) => `export { ${names.join(', ')} } from ${JSON.stringify(`./${path}`)};`)
              .join('\n'),
            resolveDir: ROOT,
            sourcefile: 'worker-modules.ts',
            loader: /** @type {const} */ ('ts'),
          },
        };
  const out = await build({
    ...input,
    bundle: true,
    write: false,
    format: 'esm',
    platform,
    target: platform === 'node' ? 'node20' : 'es2022',
    external: opts.external ?? [],
    plugins: platform === 'node' ? [compiledWasm] : [],
    logLevel: 'silent',
  });
  const file = out.outputFiles[0];
  if (!file) throw new Error('esbuild produced no output');
  return file.text;
}

/**
 * Bundles and imports repository TypeScript. The bundle is imported from a data: URL, so nothing is written to
 * disk and there is no stale cache. Callers state the type they get with a JSDoc `@type` taken from the source
 * (`typeof import('../src/...')`).
 * @param {BundleInput} what
 * @returns {Promise<Record<string, any>>}
 */
export async function importTs(what) {
  const text = await bundleTs(what);
  return import(`data:text/javascript;base64,${Buffer.from(text).toString('base64')}`);
}

/**
 * The named exports of repository modules, e.g. `{ 'src/auth/passwords.ts': ['hashPassword'] }`.
 * @param {Record<string, string[]>} modules
 */
export function importWorkerModules(modules) {
  return importTs({ exports: modules });
}
