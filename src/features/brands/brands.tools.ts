import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { listBrands } from './brands';
import { BrandSchema } from '../../schemas/catalog';
import { runTool, toolInput, toolSchema, toolSuccess, type ToolDeps } from '../../mcp/tool-result';

export const ListBrandsOutput = z.object({ brands: z.array(BrandSchema) });

// Built once per isolate, like every tool's arguments: each request's server only binds them to its context.
const ListBrandsInput = toolInput({});

export function registerBrandTools(server: McpServer, { ctx }: ToolDeps) {
  server.registerTool(
    'list_brands',
    {
      title: 'List brands',
      description:
        'The brands these credentials reach: brandId, name, dataset (for table names), timezone (of stored-query ' +
        'periods) and queryable (false: no dataset yet).',
      inputSchema: ListBrandsInput,
      outputSchema: toolSchema(ListBrandsOutput),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    () => runTool(ctx, 'list_brands', async () => toolSuccess(ListBrandsOutput, await listBrands(ctx))),
  );
}
