import { z } from 'zod';
import { listBrands } from './brands';
import { BrandSchema } from '../../schemas/catalog';
import { ANNOTATIONS, defineTool } from '../../mcp/define-tool';

export const ListBrandsOutput = z.object({ brands: z.array(BrandSchema) });

export const listBrandsTool = defineTool({
  name: 'list_brands',
  title: 'List brands',
  description:
    'The brands these credentials reach: brandId, name, dataset (for table names), timezone (of stored-query ' +
    'periods) and queryable (false: no dataset yet).',
  input: {},
  output: ListBrandsOutput,
  annotations: ANNOTATIONS.read,
  run: (_input, { ctx }) => listBrands(ctx),
});
