import { z } from 'zod';
import { fetchItem, knowledgeItems, searchItems } from './search';
import { resultSizeMeta } from '../../mcp/tool-result';
import { ANNOTATIONS, defineTool } from '../../mcp/define-tool';

/** Results one search returns at most. */
const SEARCH_LIMIT = 20;
/** fetch text beyond this is cut (reports with many long sections); the item's url still names all of it. */
const FETCH_TEXT_CHARS = 100_000;

// OpenAI's shapes for deep research and company knowledge: exactly these fields.
export const SearchOutput = z.object({ results: z.array(z.object({ id: z.string(), title: z.string(), url: z.string() })) });
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
    'Find brands, reports and their sections, saved queries and tables by words; fetch an id for the details. ' +
    'Table lists come from the warehouse (a cold read counts one run per brand).',
  input: { query: z.string().min(1).max(500) },
  output: SearchOutput,
  annotations: ANNOTATIONS.read,
  run: async ({ query }, { ctx, origin }) => {
    const found = searchItems(await knowledgeItems(ctx, origin), query, SEARCH_LIMIT);
    return { results: found.map(({ id, title, url }) => ({ id, title, url })) };
  },
});

export const fetchTool = defineTool({
  name: 'fetch',
  title: 'Fetch',
  description: "One search result in full: a report's instructions and sections' SQL, a query's SQL, a table's columns (one run).",
  input: { id: z.string().min(1).max(600) },
  output: FetchOutput,
  annotations: ANNOTATIONS.read,
  meta: () => resultSizeMeta(FETCH_TEXT_CHARS + 2_000),
  run: async ({ id }, { ctx, origin }) => {
    const item = await fetchItem(ctx, origin, id);
    const text =
      item.text.length > FETCH_TEXT_CHARS ? `${item.text.slice(0, FETCH_TEXT_CHARS)}\n[cut at ${FETCH_TEXT_CHARS} characters]` : item.text;
    return { ...item, text };
  },
});
