import { catalogSnapshot, hasDataset } from '../../catalog/snapshot';
import type { Brand } from '../../schemas/catalog';
import type { OpContext } from '../../context';
import { datasetCoverage } from '../tables/list-tables';

/**
 * listBrands: the brands the principal can access, ordered by id, with the facts a caller otherwise finds out by
 * trial: the time zone stored-query periods use (UTC when unset), whether the brand can be queried at all, the
 * currency its money columns are in (brand settings) and the first and last day with data (the warehouse's table
 * labels through `tables.list`, cached per dataset: no query is run and nothing is billed).
 */
export async function listBrands(ctx: OpContext): Promise<{ brands: Brand[] }> {
  const { brands } = await catalogSnapshot(ctx.env, ctx.now);
  const reachable = [...ctx.principal.brandIds].sort().flatMap((id) => brands.get(id) ?? []);
  const out = await Promise.all(
    reachable.map(async (b): Promise<Brand> => ({
      brandId: b.id,
      name: b.name,
      dataset: b.dataset,
      timezone: b.timezone ?? 'UTC',
      queryable: hasDataset(b),
      currency: b.currency,
      coverage: hasDataset(b) ? await datasetCoverage(ctx, b.id, b.dataset) : null,
    })),
  );
  return { brands: out };
}
