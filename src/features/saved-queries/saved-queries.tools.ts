import { listSavedQueries } from './saved-queries';
import { QueryListSchema } from '../../schemas/catalog';
import { BrandIdField } from '../../schemas/fields';
import { ANNOTATIONS, defineTool } from '../../mcp/define-tool';
import { queriesText } from '../reports/reports.tools';

export const listSavedQueriesTool = defineTool({
  name: 'list_saved_queries',
  title: 'List saved queries',
  description: "A brand's standalone saved queries with their SQL. Run one with run_query { queryId: id } (no period), or adapt its SQL.",
  input: {
    brandId: BrandIdField.optional().describe("Omit with organization credentials to list every brand's."),
  },
  output: QueryListSchema,
  text: ({ queries }) => queriesText(queries, (q) => `saved:${q.id}`),
  annotations: ANNOTATIONS.read,
  run: (input, { ctx }) => listSavedQueries(ctx, input),
});
