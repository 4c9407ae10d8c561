import { z } from 'zod';
import { listBrands } from './brands';
import { BrandSchema } from '../../schemas/catalog';
import { ANNOTATIONS, defineTool } from '../../mcp/define-tool';

export const ListBrandsOutput = z.object({ brands: z.array(BrandSchema) });

export const listBrandsTool = defineTool({
  name: 'list_brands',
  title: 'List brands',
  description:
    'Brands these credentials reach: dataset (for table names), timezone (of periods), queryable, currency (ISO ' +
    '4217) and coverage (first and last day with data).',
  input: {},
  output: ListBrandsOutput,
  annotations: ANNOTATIONS.read,
  run: (_input, { ctx }) => listBrands(ctx),
});
