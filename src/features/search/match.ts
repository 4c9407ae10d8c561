/**
 * How `search` matches and quotes: words, not phrases. A query is cut into words (letters, digits and `_`), common
 * English words are dropped, and a plural `s` is cut (`sales` finds `sale`, `orders` finds `order_id`). A document
 * is a result only when it matches every word of the query: by the word itself, or, at a lower weight, through a word
 * people use for the same thing (SYNONYMS). Whole words and the title count more than a part of a word or the text,
 * and the query as a phrase more still. A word no document matches makes the search empty, and says which word.
 */

/** Weights of one query word by where and how it matched (whole word or inside one), or only through a synonym. */
const WEIGHT = { titleWord: 4, title: 3, textWord: 2, text: 1.5, synonym: 1 } as const;
/** Extra weight when the query's words appear together, as typed, in the title or the text. */
const PHRASE = { title: 6, text: 2 } as const;

const STOP_WORDS = new Set([
  'a',
  'an',
  'and',
  'are',
  'by',
  'for',
  'from',
  'how',
  'in',
  'is',
  'of',
  'on',
  'or',
  'per',
  'the',
  'to',
  'what',
  'which',
  'with',
]);

/**
 * Words an analyst says for what the catalog names otherwise ("sales" for revenue and orders). Keys and values are
 * stems (see stem()).
 */
const SYNONYMS: Record<string, readonly string[]> = {
  sale: ['revenue', 'order'],
  revenue: ['sale'],
  turnover: ['revenue'],
  income: ['revenue'],
  purchase: ['order'],
  client: ['customer'],
  buyer: ['customer'],
  item: ['product'],
  sku: ['product'],
  traffic: ['event', 'visit'],
};

function stem(word: string): string {
  return word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}

/** The query's words, stemmed, each once. */
export function queryWords(query: string): string[] {
  const words = query
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((w) => w.length > 0 && !STOP_WORDS.has(w))
    .map(stem);
  return [...new Set(words)];
}

export interface Match {
  score: number;
  /** Plain text around the query's words, from the document's quotable part; empty when the document is no result. */
  snippet: string;
}

/** Characters of a snippet at most (before the ellipses). */
export const SNIPPET_CHARS = 160;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Where `word` appears in `lower` (already lower case): as a whole word, inside a word, or not at all. */
function find(lower: string, word: string): 'word' | 'part' | null {
  if (!lower.includes(word)) return null;
  return new RegExp(`(^|[^\\p{L}\\p{N}])${escapeRegExp(word)}s?($|[^\\p{L}\\p{N}])`, 'u').test(lower) ? 'word' : 'part';
}

/** Markdown as a person reads it: emphasis, code ticks, headings, quotes and list marks dropped, link texts kept. */
function plainText(markdown: string): string {
  return markdown
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/(\*\*|__|\*|`)/g, '')
    .replace(/^\s{0,3}(#{1,6}|>|[-*+]|\d+\.)\s+/gm, '');
}

function hits(line: string, words: readonly string[]): { count: number; first: number } {
  let count = 0;
  let first = -1;
  for (const w of words) {
    const at = line.indexOf(w);
    if (at < 0) continue;
    count++;
    if (first < 0 || at < first) first = at;
  }
  return { count, first };
}

/** A short quote of `line` around the first of `words` in it. */
function cut(line: string, words: readonly string[]): string {
  const flat = line.replace(/\s+/g, ' ').trim();
  if (flat.length <= SNIPPET_CHARS) return flat;
  const at = Math.max(0, hits(flat.toLowerCase(), words).first);
  const start = Math.max(0, Math.min(at - 40, flat.length - SNIPPET_CHARS));
  const end = start + SNIPPET_CHARS;
  return `${start > 0 ? '…' : ''}${flat.slice(start, end).trim()}${end < flat.length ? '…' : ''}`;
}

/** A document to match: its title, the text matched, and the part of it a snippet may quote (default: all of it). */
export interface MatchDocument {
  title: string;
  text: string;
  /** What describes the document in words (not its SQL or a list of other items' names): what a snippet quotes. */
  quote?: string;
}

/**
 * The document's score for the query's words (0: not a result, because some word matched neither the document
 * nor a synonym in it) and the snippet to show with it: the quotable line with the most matched words, in plain
 * text, or the first quotable line when the match was elsewhere (in the SQL, say), so the snippet describes the
 * result rather than quoting code.
 */
export function matchDocument(doc: MatchDocument, words: readonly string[]): Match {
  const lowerTitle = doc.title.toLowerCase();
  const lowerText = doc.text.toLowerCase();
  let score = 0;
  const seen: string[] = [];
  for (const w of words) {
    const inTitle = find(lowerTitle, w);
    const inText = inTitle === 'word' ? null : find(lowerText, w);
    if (inTitle !== null || inText !== null) {
      score += Math.max(
        inTitle === 'word' ? WEIGHT.titleWord : inTitle === 'part' ? WEIGHT.title : 0,
        inText === 'word' ? WEIGHT.textWord : inText === 'part' ? WEIGHT.text : 0,
      );
      seen.push(w);
      continue;
    }
    const alike = (SYNONYMS[w] ?? []).filter((s) => lowerText.includes(s) || lowerTitle.includes(s));
    if (alike.length === 0) return { score: 0, snippet: '' };
    score += WEIGHT.synonym;
    seen.push(...alike);
  }
  if (words.length > 1) {
    const phrase = words.join(' ');
    if (lowerTitle.includes(phrase)) score += PHRASE.title;
    else if (lowerText.includes(phrase)) score += PHRASE.text;
  }
  const lines = plainText(doc.quote ?? doc.text)
    .split('\n')
    .filter((l) => l.trim().length > 0);
  let best = { line: lines[0] ?? '', count: 0 };
  for (const line of lines) {
    const { count } = hits(line.toLowerCase(), seen);
    if (count > best.count) best = { line, count };
  }
  return { score, snippet: cut(best.line, seen) };
}

/** The query's words that no document matches, by themselves or through a synonym (what "nothing matched" names). */
export function unmatchedWords(docs: readonly MatchDocument[], words: readonly string[]): string[] {
  const lower = docs.map((d) => `${d.title}\n${d.text}`.toLowerCase());
  return words.filter((w) => !lower.some((d) => d.includes(w) || (SYNONYMS[w] ?? []).some((s) => d.includes(s))));
}
