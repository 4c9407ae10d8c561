/**
 * Markdown for memory content on the admin pages: a small, safe subset. The text is HTML-escaped first, entirely;
 * only then are these constructs turned into markup, so nothing the author wrote can become an element, an attribute
 * or a script:
 *
 * - blocks: paragraphs (blank-line separated; single line breaks kept), `#`..`###` headings (shown as h4..h6, below
 *   the page's own), `-`/`*` bullet lists, `1.` numbered lists, ``` fenced code blocks, `>` quotes;
 * - tables (GitHub's form: a header row, a `|---|:---:|` separator, body rows), inside a box that scrolls sideways
 *   when wide, so a page never does;
 * - inline: `code`, **bold**, *italic* / _italic_, [text](https://...) links (http and https only, opened with
 *   rel="noopener noreferrer nofollow"; anything else stays text), images `![alt](url)`: a raster `data:image/...`
 *   image is shown (the pages' CSP allows `img-src data:`, and a PNG/JPEG/GIF/WebP cannot run script); any other
 *   address is not loaded (the CSP forbids it, and loading it would tell a third party who reads the memory): the
 *   image is shown as its alt text in a marked box, with a link to open it.
 *
 * Raw HTML in the source is shown as text. Pure: string in, string out.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** Inline constructs over already-escaped text. Code spans are cut out first so nothing inside them is formatted. */
function inline(escaped: string): string {
  const codes: string[] = [];
  let s = escaped.replace(/`([^`\n]+)`/g, (_, code: string) => {
    codes.push(`<code>${code}</code>`);
    return `\u0000${codes.length - 1}\u0000`;
  });
  // Images before links (an image is a link with a "!" in front). The URL was escaped with the rest.
  s = s.replace(/!\[([^\]\n]*)\]\(([^\s)]+)\)/g, (whole, alt: string, url: string) => {
    if (/^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+$/.test(url)) return `<img class="md-image" src="${url}" alt="${alt}">`;
    if (!/^https?:\/\//.test(url)) return whole;
    const label = alt.trim() === '' ? 'image' : alt;
    return (
      `<span class="md-image"><span role="img" aria-label="Image: ${label}">Image: ${label}</span>` +
      `<a href="${url}" rel="noopener noreferrer nofollow">open image</a></span>`
    );
  });
  // Links: the URL was escaped with the rest, so quotes cannot close the attribute; only http(s) is linked.
  s = s.replace(
    /\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g,
    (_, text: string, url: string) => `<a href="${url}" rel="noopener noreferrer nofollow">${text}</a>`,
  );
  s = s.replace(/\*\*([^*\n]+)\*\*/g, '<strong>$1</strong>');
  s = s.replace(/(^|[^*\w])\*([^*\n]+)\*(?!\w)/g, '$1<em>$2</em>');
  s = s.replace(/(^|[^\w])_([^_\n]+)_(?!\w)/g, '$1<em>$2</em>');
  return s.replace(/\u0000(\d+)\u0000/g, (_, i: string) => codes[Number(i)] ?? '');
}

/** The cells of a table row: `| a | b |` or `a | b`, with `\|` as a literal bar. */
function cells(line: string): string[] {
  const inner = line
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '');
  return inner.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

const TABLE_RULE = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;

/** A table starting at `lines[i]` (its header) when the next line is its separator: the HTML and the lines it used. */
function table(lines: readonly string[], i: number): { html: string; used: number } | null {
  const head = lines[i] ?? '';
  const rule = lines[i + 1] ?? '';
  if (!head.includes('|') || !TABLE_RULE.test(rule) || !rule.includes('-')) return null;
  const names = cells(head);
  const aligns = cells(rule).map((c) => (c.startsWith(':') && c.endsWith(':') ? 'center' : c.endsWith(':') ? 'right' : ''));
  if (aligns.length !== names.length) return null;
  const cls = (j: number) => (aligns[j] ? ` class="al-${aligns[j]}"` : '');
  const rows: string[][] = [];
  let j = i + 2;
  for (; j < lines.length && (lines[j] ?? '').includes('|') && (lines[j] ?? '').trim() !== ''; j++) rows.push(cells(lines[j] ?? ''));
  const th = names.map((n, k) => `<th scope="col"${cls(k)}>${inline(escapeHtml(n))}</th>`).join('');
  const body = rows.map((r) => `<tr>${names.map((_, k) => `<td${cls(k)}>${inline(escapeHtml(r[k] ?? ''))}</td>`).join('')}</tr>`).join('');
  return { html: `<div class="md-table"><table><thead><tr>${th}</tr></thead><tbody>${body}</tbody></table></div>`, used: j - i };
}

export function renderMarkdown(source: string): string {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  let para: string[] = [];
  let list: { tag: 'ul' | 'ol'; items: string[] } | null = null;
  let quote: string[] = [];
  const flushPara = () => {
    if (para.length) out.push(`<p>${para.map((l) => inline(escapeHtml(l))).join('<br>')}</p>`);
    para = [];
  };
  const flushList = () => {
    if (list) out.push(`<${list.tag}>${list.items.map((i) => `<li>${inline(escapeHtml(i))}</li>`).join('')}</${list.tag}>`);
    list = null;
  };
  const flushQuote = () => {
    if (quote.length) out.push(`<blockquote>${quote.map((l) => inline(escapeHtml(l))).join('<br>')}</blockquote>`);
    quote = [];
  };
  const flush = () => {
    flushPara();
    flushList();
    flushQuote();
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (/^```/.test(line)) {
      flush();
      const code: string[] = [];
      for (i++; i < lines.length && !/^```/.test(lines[i] ?? ''); i++) code.push(lines[i] ?? '');
      out.push(`<pre><code>${escapeHtml(code.join('\n'))}</code></pre>`);
      continue;
    }
    if (line.trim() === '') {
      flush();
      continue;
    }
    const t = table(lines, i);
    if (t) {
      flush();
      out.push(t.html);
      i += t.used - 1;
      continue;
    }
    const heading = /^(#{1,3})\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      const level = (heading[1] ?? '#').length + 3;
      out.push(`<h${level}>${inline(escapeHtml(heading[2] ?? ''))}</h${level}>`);
      continue;
    }
    const bullet = /^\s*[-*]\s+(.*)$/.exec(line);
    const numbered = /^\s*\d+[.)]\s+(.*)$/.exec(line);
    if (bullet || numbered) {
      flushPara();
      flushQuote();
      const tag = bullet ? 'ul' : 'ol';
      if (list && list.tag !== tag) flushList();
      list ??= { tag, items: [] };
      list.items.push((bullet ?? numbered)?.[1] ?? '');
      continue;
    }
    const quoted = /^>\s?(.*)$/.exec(line);
    if (quoted) {
      flushPara();
      flushList();
      quote.push(quoted[1] ?? '');
      continue;
    }
    flushList();
    flushQuote();
    para.push(line);
  }
  flush();
  return out.join('\n');
}
