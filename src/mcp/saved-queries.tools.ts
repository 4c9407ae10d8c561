import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { listSavedQueries } from '../operations/saved-queries';
import { QueryListSchema } from '../schemas/catalog';
import { runTool, toolSuccess, type ToolDeps } from './tool-result';

export function registerSavedQueryTools(server: McpServer, { ctx }: ToolDeps) {
  server.registerTool(
    'list_saved_queries',
    {
      title: 'List saved queries',
      description:
        "List a brand's standalone saved queries (not part of a report), with their concrete SQL and source tables. " +
        'Flow B: run one with run_query { queryId: id } as it is (no period; it returns the window it was written ' +
        'against), or adapt its SQL for a raw sql run.',
      inputSchema: z.strictObject({
        brandId: z
          .string()
          .min(1)
          .max(128)
          .optional()
          .describe(
            'Brand whose saved queries to list (brandId from list_brands). With organization credentials, omit it to list every brand\'s; with single-brand credentials omit it.',
          ),
      }),
      outputSchema: QueryListSchema,
      annotations: { title: 'List saved queries', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (input) => runTool(ctx, 'list_saved_queries', async () => toolSuccess(QueryListSchema, await listSavedQueries(ctx, input))),
  );
}
