#!/usr/bin/env node
// `npm run docs:errors` writes the errors table of docs/api.md from `ERRORS` in src/errors.ts, the one place an
// error code is written; `--check` fails when the committed table says something else (npm test runs the check
// through test/node/docs-links.test.mjs). The table sits between two HTML comments that Markdown does not show.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT, importWorkerModules } from './lib/import-ts.mjs';

const DOC = join(ROOT, 'docs/api.md');
const START = '<!-- errors table: written by `npm run docs:errors` from src/errors.ts -->';
const END = '<!-- end of errors table -->';

/** The Markdown table of `{ CODE: { status, when, origin } }`. */
export function errorsTable(errors) {
  const rows = Object.entries(errors).map(([code, e]) => `| \`${code}\` | ${e.status} | ${e.when} | ${e.origin} |`);
  return ['| code | HTTP | when | origin |', '|---|---|---|---|', ...rows].join('\n');
}

/** `doc` with the text between the markers replaced by `table`; throws when the markers are missing. */
export function withErrorsTable(doc, table) {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/api.md has no "${START}" ... "${END}" markers`);
  return `${doc.slice(0, start + START.length)}\n${table}\n${doc.slice(end)}`;
}

/** docs/api.md as `npm run docs:errors` would write it, and as it is. */
export async function errorsDoc() {
  const [{ ERRORS }, current] = await Promise.all([importWorkerModules({ 'src/errors.ts': ['ERRORS'] }), readFile(DOC, 'utf8')]);
  return { current, wanted: withErrorsTable(current, errorsTable(ERRORS)) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { current, wanted } = await errorsDoc();
  if (process.argv.includes('--check')) {
    if (current !== wanted) {
      console.error('the errors table of docs/api.md is stale: run npm run docs:errors and commit it');
      process.exitCode = 1;
    }
  } else if (current !== wanted) {
    await writeFile(DOC, wanted);
    console.log('wrote the errors table of docs/api.md');
  } else {
    console.log('docs/api.md: the errors table is current');
  }
}
