import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { listBrands } from '../operations/brands';
import { BrandSchema } from '../routes/brands/brands.routes';
import { TABLE_NAMING } from './guidance';
import { runTool, toolSuccess, type ToolDeps } from './tool-result';

export const ListBrandsOutput = z.object({
  brands: z.array(BrandSchema).describe('Brands these credentials can access; `dataset` is null when not provisioned.'),
});

export function registerBrandTools(server: McpServer, { ctx }: ToolDeps) {
  server.registerTool(
    'list_brands',
    {
      title: 'List brands',
      description:
        'List the brands these credentials can access, each with its `brandId`, `name` and warehouse `dataset`. ' +
        'Call this first: other tools take `brandId`, and raw SQL needs the dataset. ' +
        `${TABLE_NAMING} A brand whose dataset is null has no data yet and cannot be queried.`,
      inputSchema: z.strictObject({}),
      outputSchema: ListBrandsOutput,
      annotations: { title: 'List brands', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    () => runTool(ctx, 'list_brands', async () => toolSuccess(ListBrandsOutput, await listBrands(ctx))),
  );
}
