#!/usr/bin/env node
// `npm run build:views`: bundles each MCP Apps view (views/*-view.ts) with esbuild into ONE self-contained HTML
// file in dist/views/ (script and styles inline; nothing fetched from anywhere), which the Worker serves from
// Workers Static Assets (wrangler.toml [assets], binding VIEWS) as ui:// resources. Runs before `npm run dev`,
// vitest (test/global-setup.ts) and `wrangler deploy` (predeploy), so a fresh clone needs no extra step.
// Fails when a view exceeds its budget (150 KiB gzip) or references anything outside itself.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const VIEWS_DIR = join(ROOT, 'views');
export const VIEWS_OUT = join(ROOT, 'dist', 'views');
export const VIEW_BUDGET_GZIP = 150 * 1024;

/** The views: the entry file and the HTML file it becomes (also the asset path the Worker reads). */
export const VIEWS = [
  { entry: 'result-view.ts', file: 'result-view.html', title: 'Query result' },
  { entry: 'report-view.ts', file: 'report-view.html', title: 'Report' },
];

/**
 * zod's locale table is reachable from its namespace export, which the MCP SDK imports whole, so every language
 * would be bundled (~260 KB). Views only show zod messages in English: resolve the locales module to English only.
 */
const englishZodLocales = {
  name: 'zod-english-locales',
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]/.test(args.importer) ? { path: 'zod-locales-en', namespace: 'zod-locales' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, () => ({
      contents: "export { default as en } from 'zod/v4/locales/en.js';",
      resolveDir: ROOT,
      loader: 'js',
    }));
  },
};

/** The page's own CSP: inline script and style only; no connection, image, font or frame from anywhere. */
const CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

function page(title, css, js) {
  // `</script` inside the bundle would end the element early; `<\/script` is the same string to the script.
  const safeJs = js.replace(/<\/script/gi, '<\\/script');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<title>${title}</title>
<style>${css}</style>
</head>
<body>
<main id="app" aria-busy="true" aria-live="polite"><p class="note">Waiting for the result…</p></main>
<script type="module">${safeJs}</script>
</body>
</html>
`;
}

/**
 * Markup and CSS that would make the browser fetch: a URL in src/href, url() or a CSS import rule. The views must have
 * none. (The script is checked where it counts: the browser test fails on any request a view makes.)
 */
export function externalReferences(html) {
  const found = [];
  const patterns = [
    /\b(?:src|href)\s*=\s*["']?(?!data:|#)([a-z][a-z0-9+.-]*:)?\/\/[^"'\s>]*/gi,
    /url\(\s*["']?(?!data:)[^)"']+/gi,
    /@import\s/gi,
  ];
  for (const re of patterns) for (const m of html.matchAll(re)) found.push(m[0]);
  return found;
}

/**
 * Leaves a file that already holds `content` untouched: a running `wrangler dev` restarts its Worker when an
 * asset file is written, cutting off requests in flight, and every `npm run dev` (and the views test) builds
 * the views again while other instances may be serving them.
 */
async function writeIfChanged(path, content) {
  const current = await readFile(path, 'utf8').catch(() => null);
  if (current !== content) await writeFile(path, content);
}

export async function buildViews({ quiet = false } = {}) {
  await mkdir(VIEWS_OUT, { recursive: true });
  const css = await readFile(join(VIEWS_DIR, 'styles.css'), 'utf8');
  const sizes = [];
  for (const view of VIEWS) {
    const result = await build({
      entryPoints: [join(VIEWS_DIR, view.entry)],
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      write: false,
      legalComments: 'none',
      plugins: [englishZodLocales],
      logLevel: 'silent',
    });
    const js = result.outputFiles[0].text;
    const html = page(view.title, css.replace(/\s*\n\s*/g, '\n'), js);
    const gzip = gzipSync(html, { level: 9 }).length;
    if (gzip > VIEW_BUDGET_GZIP) throw new Error(`${view.file} is ${gzip} bytes gzip, over its ${VIEW_BUDGET_GZIP}-byte budget`);
    const external = externalReferences(page(view.title, css, ''));
    if (external.length > 0) throw new Error(`${view.file} references outside itself: ${external.slice(0, 3).join(', ')}`);
    await writeIfChanged(join(VIEWS_OUT, view.file), html);
    sizes.push({ file: view.file, bytes: Buffer.byteLength(html), gzip });
  }
  if (!quiet)
    for (const s of sizes)
      console.log(`[views] dist/views/${s.file}: ${(s.bytes / 1024).toFixed(1)} KiB, ${(s.gzip / 1024).toFixed(1)} KiB gzip`);
  return sizes;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  buildViews().catch((err) => {
    console.error(`[views] ${err.message}`);
    process.exit(1);
  });
}
