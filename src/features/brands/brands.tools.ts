import { z } from 'zod';
import { listBrands } from './brands';
import { BrandSchema, type Brand } from '../../schemas/catalog';
import { ANNOTATIONS, defineTool } from '../../mcp/define-tool';
import { textTable } from '../../mcp/tool-result';

export const ListBrandsOutput = z.object({ brands: z.array(BrandSchema) });

/** The brands, one line each: what a model needs to name one and write its SQL. */
function brandsText({ brands }: { brands: Brand[] }): string {
  return textTable(
    `${brands.length} brand(s)${brands.some((b) => !b.dataset) ? '; dataset - : not provisioned, nothing runs yet' : ''}.`,
    ['brandId', 'name', 'dataset', 'timezone', 'currency', 'days with data'],
    brands.map((b) => [
      b.brandId,
      b.name,
      b.dataset,
      b.timezone ?? 'UTC',
      b.currency,
      b.coverage ? `${b.coverage.firstDay}..${b.coverage.lastDay}` : null,
    ]),
  );
}

export const listBrandsTool = defineTool({
  name: 'list_brands',
  title: 'List brands',
  description:
    'Brands these credentials reach: dataset (for table names), timezone (of periods), queryable, currency (ISO ' +
    '4217) and coverage (first and last day with data).',
  input: {},
  output: ListBrandsOutput,
  text: brandsText,
  annotations: ANNOTATIONS.read,
  run: (_input, { ctx }) => listBrands(ctx),
});
