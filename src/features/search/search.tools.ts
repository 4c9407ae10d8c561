import { z } from 'zod';
import { fetchItem, searchItems, type SearchAnswer } from './search';
import { resultSizeMeta } from '../../mcp/tool-result';
import { ANNOTATIONS, defineTool } from '../../mcp/define-tool';

/** Results one search returns at most. */
const SEARCH_LIMIT = 20;
/** fetch text beyond this is cut (reports with many long sections); the item's url (a console page) shows all of it. */
const FETCH_TEXT_CHARS = 100_000;

// OpenAI's shapes for deep research and company knowledge (docs/mcp.md): a result is `id`, `title`, `url` and, as
// OpenAI's sample server sends it, `text`, the matched snippet. Both tools answer with the one text item OpenAI's
// guide asks for and no `structuredContent` beside it: ChatGPT passes both to the model, so a copy would be read twice.
export const SearchOutput = z.object({
  results: z.array(z.object({ id: z.string(), title: z.string(), url: z.string(), text: z.string() })),
  /** Only with no results: that nothing matched, and which words nothing mentions, so the model does not guess. */
  note: z.string().optional(),
});

/** What an empty search says: nothing matched, and the words no visible item mentions (or that none has them all). */
function nothingMatched(query: string, { unmatched }: Pick<SearchAnswer, 'unmatched'>): string {
  const why =
    unmatched.length > 0
      ? `no item these credentials can see mentions ${unmatched.map((w) => JSON.stringify(w)).join(' or ')}`
      : 'no item these credentials can see has all of its words; search with fewer words';
  return `Nothing matched ${JSON.stringify(query)}: ${why}.`;
}
export const FetchOutput = z.object({
  id: z.string(),
  title: z.string(),
  text: z.string(),
  url: z.string(),
  metadata: z.record(z.string(), z.string()).optional(),
});

export const searchTool = defineTool({
  name: 'search',
  title: 'Search',
  description:
    'Find brands, reports, sections, saved queries, tables (with columns) and memories by words, each of which must match; ' +
    'each result quotes the match. No results: a note says which words matched nothing.',
  input: { query: z.string().min(1).max(500) },
  output: SearchOutput,
  result: 'text',
  annotations: ANNOTATIONS.read,
  run: async ({ query }, { ctx }) => {
    const answer = await searchItems(ctx, query, SEARCH_LIMIT);
    return answer.results.length > 0 ? { results: answer.results } : { results: [], note: nothingMatched(query, answer) };
  },
});

export const fetchTool = defineTool({
  name: 'fetch',
  title: 'Fetch',
  description: "One search result in full: a report's instructions and sections, a query's SQL, a table as describe_table gives it.",
  input: { id: z.string().min(1).max(600) },
  output: FetchOutput,
  result: 'text',
  annotations: ANNOTATIONS.read,
  meta: () => resultSizeMeta(FETCH_TEXT_CHARS + 2_000),
  run: async ({ id }, { ctx }) => {
    const item = await fetchItem(ctx, id);
    const text =
      item.text.length > FETCH_TEXT_CHARS ? `${item.text.slice(0, FETCH_TEXT_CHARS)}\n[cut at ${FETCH_TEXT_CHARS} characters]` : item.text;
    return { ...item, text };
  },
});
