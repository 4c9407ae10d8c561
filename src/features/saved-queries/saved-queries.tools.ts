import type { McpServer } from '@modelcontextprotocol/server';
import { listSavedQueries } from './saved-queries';
import { QueryListSchema } from '../../schemas/catalog';
import { BrandIdField } from '../../schemas/fields';
import { runTool, toolInput, toolSchema, toolSuccess, type ToolDeps } from '../../mcp/tool-result';

const ListSavedQueriesInput = toolInput({
  brandId: BrandIdField.optional().describe('Omit with organization credentials to list every brand\'s.'),
});

export function registerSavedQueryTools(server: McpServer, { ctx }: ToolDeps) {
  server.registerTool(
    'list_saved_queries',
    {
      title: 'List saved queries',
      description:
        "A brand's standalone saved queries with their SQL. Run one with run_query { queryId: id } (no period), or adapt its SQL.",
      inputSchema: ListSavedQueriesInput,
      outputSchema: toolSchema(QueryListSchema),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (input) => runTool(ctx, 'list_saved_queries', async () => toolSuccess(QueryListSchema, await listSavedQueries(ctx, input))),
  );
}
