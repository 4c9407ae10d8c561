// Every relative Markdown link in README.md and docs/**/*.md must land inside this repository, on a file or
// directory that exists, and, when it names an anchor in a Markdown file, on a heading that file has (GitHub's
// slugs). A clone is all a reader has: a link to a folder beside the repository is dead for them.
// And docs/api.md's errors table is what `npm run docs:errors` writes from src/errors.ts (test/docs-api.test.ts
// checks its operations and tools).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { errorsDoc, errorsTable, withErrorsTable } from '../../scripts/docs-errors.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Lines outside fenced code blocks (``` or ~~~), with their 1-based numbers. */
function proseLines(text) {
  const out = [];
  let fence = null;
  text.split('\n').forEach((line, i) => {
    const m = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (fence === null) fence = m[1];
      else if (m[1][0] === fence[0] && m[1].length >= fence.length) fence = null;
      return;
    }
    if (fence === null) out.push({ line, n: i + 1 });
  });
  return out;
}

/**
 * GitHub's heading anchor: the rendered text (code spans and link text kept, markup dropped), lower-cased,
 * every character that is not a letter, digit, mark, space, `-` or `_` removed, spaces turned into `-`.
 * Repeated slugs get `-1`, `-2`, ... in document order.
 */
export function githubSlug(heading) {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M} _-]/gu, '').replace(/ /g, '-');
}

/** The anchors a Markdown document's headings (ATX `#` and setext) give it. */
export function anchorsOf(text) {
  const seen = new Map();
  const anchors = new Set();
  const add = (heading) => {
    const base = githubSlug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  };
  const lines = proseLines(text);
  lines.forEach(({ line }, i) => {
    const atx = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+\s*)?$/.exec(line);
    if (atx) return add(atx[1]);
    const next = lines[i + 1];
    if (next && next.n === lines[i].n + 1 && line.trim() !== '' && /^\s{0,3}(=+|-+)\s*$/.test(next.line) && !/^\s*[-*|>]/.test(line)) {
      add(line.trim());
    }
  });
  // Explicit anchors: <a name="x"> / <a id="x">.
  for (const m of text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1]);
  return anchors;
}

/** Link targets of a Markdown document: inline `[text](target)` / `![alt](target)` and reference definitions. */
export function linksOf(text) {
  const links = [];
  for (const { line, n } of proseLines(text)) {
    // A code span is literal text, not a link, unless it is the link's text (`[`x`](y)`): drop spans that are not.
    const prose = line.replace(/(?<!\[)`+[^`]*`+(?!\])/g, (s) => (s.includes('](') ? ' '.repeat(s.length) : s));
    for (const m of prose.matchAll(/\[(?:[^\]`]|`[^`]*`)*\]\(\s*<?([^)\s>]+)>?(?:\s+["'(][^)]*)?\)/g))
      links.push({ target: m[1], line: n });
    const def = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$/.exec(prose);
    if (def) links.push({ target: def[1], line: n });
  }
  return links;
}

/**
 * Problems with the relative links of `file` (absolute path inside `root`): each `{ line, target, problem }`.
 * URLs with a scheme (https:, mailto:) and protocol-relative ones are not checked here.
 */
export function checkLinks(root, file, readText = (p) => readFileSync(p, 'utf8')) {
  const problems = [];
  const anchorCache = new Map();
  const anchorsIn = (p) => {
    if (!anchorCache.has(p)) anchorCache.set(p, anchorsOf(readText(p)));
    return anchorCache.get(p);
  };
  for (const { target, line } of linksOf(readText(file))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
    const hash = target.indexOf('#');
    const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash)).split('?')[0];
    const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
    const dest = pathPart === '' ? file : pathPart.startsWith('/') ? join(root, pathPart) : resolve(dirname(file), pathPart);
    const rel = relative(root, dest);
    if (rel === '..' || rel.startsWith(`..${sep}`) || resolve(root, rel) !== dest) {
      problems.push({ line, target, problem: 'points outside the repository' });
      continue;
    }
    if (!existsSync(dest)) {
      problems.push({ line, target, problem: `no such file: ${rel}` });
      continue;
    }
    if (anchor !== null && anchor !== '' && dest.endsWith('.md') && statSync(dest).isFile() && !anchorsIn(dest).has(anchor)) {
      problems.push({ line, target, problem: `no heading with anchor #${anchor} in ${rel}` });
    }
  }
  return problems;
}

/** README.md and every Markdown file under docs/. */
function documents(root) {
  const out = [join(root, 'README.md')];
  const walk = (dir) => {
    if (!existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.md')) out.push(p);
    }
  };
  walk(join(root, 'docs'));
  return out;
}

describe('docs/api.md covers the API', () => {
  it('writes the errors table between its markers (synthetic)', () => {
    const table = errorsTable({ UNAUTHORIZED: { status: 401, when: 'key missing', origin: 'contract' } });
    expect(table).toBe('| code | HTTP | when | origin |\n|---|---|---|---|\n| `UNAUTHORIZED` | 401 | key missing | contract |');
    const start = '<!-- errors table: written by `npm run docs:errors` from src/errors.ts -->';
    const doc = `# API\n${start}\n| old |\n<!-- end of errors table -->\n## Limits\n`;
    expect(withErrorsTable(doc, table)).toBe(`# API\n${start}\n${table}\n<!-- end of errors table -->\n## Limits\n`);
    expect(() => withErrorsTable('# API\n| old |\n', table)).toThrow(/markers/);
  });

  it('lists every error code of src/errors.ts with its status and meaning, as npm run docs:errors writes it', async () => {
    const { current, wanted } = await errorsDoc();
    expect(current).toBe(wanted);
    expect([...current.matchAll(/^\| `[A-Z_]+` \| \d{3} \|/gm)].length).toBeGreaterThanOrEqual(20);
  });
});

describe('the link checker (synthetic documents)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'docs-links-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const repo = join(dir, 'repo');
  mkdirSync(join(repo, 'docs'), { recursive: true });
  writeFileSync(join(dir, 'outside.md'), '# Outside\n');
  writeFileSync(
    join(repo, 'docs', 'guide.md'),
    [
      '# Running queries: `POST /v1/data/query` (and MCP `run_query`)',
      '## Claude Desktop (and other clients that only start local commands)',
      '## Limits',
      '## Limits',
      'Setext heading',
      '--------------',
      '```md',
      '# Not a heading',
      '[fenced](../../outside.md)',
      '```',
    ].join('\n'),
  );
  writeFileSync(
    join(repo, 'README.md'),
    [
      'Good: [guide](docs/guide.md), [`guide`](docs/guide.md#running-queries-post-v1dataquery-and-mcp-run_query),',
      '[again](docs/guide.md#claude-desktop-and-other-clients-that-only-start-local-commands), [dup](docs/guide.md#limits-1),',
      '[setext](docs/guide.md#setext-heading), [dir](docs), [web](https://example.com/x.md), [self](#top-heading).',
      '# Top heading',
      'Bad: [`spec/api.md`](../outside.md) and [missing](docs/missing.md) and [anchor](docs/guide.md#no-such-heading)',
      'and [fenced heading](docs/guide.md#not-a-heading) and [self](#nope) and `[code](not/a/link.md)`.',
      '[ref]: ../outside.md',
    ].join('\n'),
  );

  it('computes GitHub slugs', () => {
    expect(githubSlug('Running queries: `POST /v1/data/query` (and MCP `run_query`)')).toBe(
      'running-queries-post-v1dataquery-and-mcp-run_query',
    );
    expect(githubSlug('Browser clients: CORS and Origin')).toBe('browser-clients-cors-and-origin');
    expect(githubSlug('Credentials: one account, or one per brand')).toBe('credentials-one-account-or-one-per-brand');
    expect(githubSlug('Reports, saved queries & [the catalog](x.md)')).toBe('reports-saved-queries--the-catalog');
  });

  it('reports links outside the repository, missing files and missing anchors, and nothing else', () => {
    const problems = checkLinks(repo, join(repo, 'README.md'));
    expect(problems.map((p) => [p.line, p.target, p.problem])).toEqual([
      [5, '../outside.md', 'points outside the repository'],
      [5, 'docs/missing.md', `no such file: ${join('docs', 'missing.md')}`],
      [5, 'docs/guide.md#no-such-heading', `no heading with anchor #no-such-heading in ${join('docs', 'guide.md')}`],
      [6, 'docs/guide.md#not-a-heading', `no heading with anchor #not-a-heading in ${join('docs', 'guide.md')}`],
      [6, '#nope', 'no heading with anchor #nope in README.md'],
      [7, '../outside.md', 'points outside the repository'],
    ]);
  });

  it('ignores links inside fenced code', () => {
    expect(checkLinks(repo, join(repo, 'docs', 'guide.md'))).toEqual([]);
  });
});

describe('README.md and docs/**/*.md', () => {
  const docs = documents(ROOT);

  it('finds the documents', () => {
    expect(docs.length).toBeGreaterThan(5);
  });

  it.each(docs.map((p) => [relative(ROOT, p)]))('%s: every relative link resolves inside the repository', (rel) => {
    const problems = checkLinks(ROOT, join(ROOT, rel)).map((p) => `${rel}:${p.line}: ${p.target}: ${p.problem}`);
    expect(problems).toEqual([]);
  });
});
