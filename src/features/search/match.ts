/**
 * How `search` matches and quotes: words, not phrases. A query is cut into words (letters, digits and `_`), common
 * English words are dropped, and a plural `s` is cut (`sales` finds `sale`, `orders` finds `order_id`). A word
 * matches a document when its text contains it; a few words of this domain also count, at a lower weight, when a
 * word people use for the same thing appears instead (SYNONYMS). A document with no matching word is not a result.
 */

/** Weights of one query word: in the title, in the text, only through a synonym. */
const WEIGHT = { title: 3, text: 2, synonym: 1 } as const;

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
  /** The line of the text that holds the most query words, cut around the first of them; empty when none does. */
  snippet: string;
}

/** Characters of a snippet at most (before the ellipses). */
export const SNIPPET_CHARS = 160;

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

/** The document's score for the query's words (0: not a result) and the snippet to show with it. */
export function matchDocument(title: string, text: string, words: readonly string[]): Match {
  const lowerTitle = title.toLowerCase();
  const lowerText = text.toLowerCase();
  let score = 0;
  const seen: string[] = [];
  for (const w of words) {
    if (lowerTitle.includes(w)) {
      score += WEIGHT.title;
      seen.push(w);
    } else if (lowerText.includes(w)) {
      score += WEIGHT.text;
      seen.push(w);
    } else {
      const alike = (SYNONYMS[w] ?? []).filter((s) => lowerText.includes(s) || lowerTitle.includes(s));
      if (alike.length > 0) {
        score += WEIGHT.synonym;
        seen.push(...alike);
      }
    }
  }
  if (score === 0) return { score, snippet: '' };
  const lines = text.split('\n').filter((l) => l.trim().length > 0);
  let best = { line: lines[0] ?? '', count: 0 };
  for (const line of lines) {
    const { count } = hits(line.toLowerCase(), seen);
    if (count > best.count) best = { line, count };
  }
  return { score, snippet: cut(best.line, seen) };
}
