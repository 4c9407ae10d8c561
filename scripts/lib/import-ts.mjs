// The one esbuild loader of the Node tooling. The admin CLI, `npm run dev`, the benches and the Node tests call
// the Worker's own TypeScript modules instead of re-implementing them: key generation, password hashing, the
// demo seed, the SQL guard must be byte-for-byte what the Worker runs, so there is exactly one implementation
// of each, bundled here on demand. A bundle is kept in node_modules/.cache/import-ts and used again only while every
// file esbuild read for it is byte for byte the same (each one's hash is kept with it; keepBundle says what that
// misses): the admin CLI, `npm run setup` and `npm run dev` bundle the same modules at every start, 112 times in
// seven test files (26 s of esbuild).
import { build, version as ESBUILD_VERSION } from 'esbuild';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
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
  const external = opts.external ?? [];
  const key = sha256(JSON.stringify({ esbuild: ESBUILD_VERSION, what, platform, external }));
  const kept = await keptBundle(key);
  if (kept !== null) return kept;
  const input =
    'entry' in what
      ? { entryPoints: [join(ROOT, what.entry)] }
      : {
          stdin: {
            contents: Object.entries(what.exports)
              .map(([path, names]) => `export { ${names.join(', ')} } from ${JSON.stringify(`./${path}`)};`)
              .join('\n'),
            resolveDir: ROOT,
            sourcefile: STDIN_NAME,
            loader: /** @type {const} */ ('ts'),
          },
        };
  const started = Date.now();
  const out = await build({
    ...input,
    absWorkingDir: ROOT,
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    platform,
    target: platform === 'node' ? 'node20' : 'es2022',
    external,
    plugins: platform === 'node' ? [compiledWasm] : [],
    logLevel: 'silent',
  });
  const file = out.outputFiles[0];
  if (!file) throw new Error('esbuild produced no output');
  await keepBundle(key, Object.keys(out.metafile.inputs), file.text, started);
  return file.text;
}

/** The name esbuild gives the generated module of `{ exports }` (its text is part of the cache key). */
const STDIN_NAME = 'worker-modules.ts';
/** Where bundles are kept between runs, beside other tools' caches. */
export const BUNDLE_CACHE_DIR = join(ROOT, 'node_modules', '.cache', 'import-ts');

/** @param {string | Buffer} data */
const sha256 = (data) => createHash('sha256').update(data).digest('hex');

/**
 * The sha256 of each file, in order (paths relative to ROOT); rejects when one cannot be read.
 * @param {string[]} paths
 */
const fileHashes = (paths) => Promise.all(paths.map(async (path) => sha256(await readFile(join(ROOT, path)))));

/**
 * The kept bundle for `key`, or null when there is none or any file it was built from changed (or is gone).
 * @param {string} key
 * @returns {Promise<string | null>}
 */
async function keptBundle(key) {
  try {
    const kept = /** @type {{ inputs: Record<string, string>, text: string }} */ (
      JSON.parse(await readFile(join(BUNDLE_CACHE_DIR, `${key}.json`), 'utf8'))
    );
    const hashes = await fileHashes(Object.keys(kept.inputs));
    return Object.values(kept.inputs).every((hash, i) => hashes[i] === hash) ? kept.text : null;
  } catch {
    return null;
  }
}

/**
 * Keeps a bundle with the hash of each file esbuild read for it (paths relative to ROOT), and of tsconfig.json, which
 * esbuild reads for its settings without listing it. The generated module of `{ exports }` and the compiled-wasm
 * stubs are not files: their text follows from the key and from the paths of the files that import them. One case is
 * not seen: a new file that would now win module resolution over a kept input (an `x.tsx` added beside `x.ts`).
 * Not kept when a file changed in the second before the build began or since (what esbuild read may not be what is
 * hashed now). Written whole, then renamed, so a concurrent reader never sees half of it; a bundle that cannot be
 * kept is simply built again next time.
 * @param {string} key @param {string[]} inputs @param {string} text @param {number} started when the build began (ms)
 */
async function keepBundle(key, inputs, text, started) {
  const tmp = join(BUNDLE_CACHE_DIR, `${key}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const files = [...inputs.filter((path) => path !== STDIN_NAME && !path.startsWith('compiled-wasm:')), 'tsconfig.json'];
    // A second's margin: a file's time comes from the kernel's coarse clock, a few ms behind Date.now().
    const changed = await Promise.all(files.map(async (path) => (await stat(join(ROOT, path))).mtimeMs >= started - 1000));
    if (changed.includes(true)) return;
    const hashes = await fileHashes(files);
    await mkdir(BUNDLE_CACHE_DIR, { recursive: true });
    await writeFile(tmp, JSON.stringify({ inputs: Object.fromEntries(files.map((path, i) => [path, hashes[i]])), text }));
    await rename(tmp, join(BUNDLE_CACHE_DIR, `${key}.json`));
  } catch {
    await rm(tmp, { force: true });
  }
}

/**
 * Bundles and imports repository TypeScript. The bundle is imported from a data: URL (a kept copy is checked
 * against every file it was built from). Callers state the type they get with a JSDoc `@type` taken from the source
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
