import { catalogSnapshot, hasDataset } from '../../catalog/snapshot';
import type { Brand } from '../../schemas/catalog';
import type { OpContext } from '../../context';

/**
 * listBrands: the brands the principal can access, ordered by id, with the facts a caller otherwise finds out by
 * trial: the time zone stored-query periods use (UTC when unset) and whether the brand can be queried at all.
 */
export async function listBrands(ctx: OpContext): Promise<{ brands: Brand[] }> {
  const { brands } = await catalogSnapshot(ctx.env, ctx.now);
  const out: Brand[] = [];
  for (const id of [...ctx.principal.brandIds].sort()) {
    const b = brands.get(id);
    if (b) out.push({ brandId: b.id, name: b.name, dataset: b.dataset, timezone: b.timezone ?? 'UTC', queryable: hasDataset(b) });
  }
  return { brands: out };
}
