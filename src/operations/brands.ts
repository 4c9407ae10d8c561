import { catalogSnapshot } from '../catalog/snapshot';
import type { OpContext } from './context';

export interface Brand {
  brandId: string;
  name: string | null;
  dataset: string | null;
}

/** listBrands: the brands the principal can access, ordered by id. */
export async function listBrands(ctx: OpContext): Promise<{ brands: Brand[] }> {
  const { brands } = await catalogSnapshot(ctx.env, ctx.now);
  const out: Brand[] = [];
  for (const id of [...ctx.principal.brandIds].sort()) {
    const b = brands.get(id);
    if (b) out.push({ brandId: b.id, name: b.name, dataset: b.dataset });
  }
  return { brands: out };
}
