import type { OpContext } from './context';

export interface Brand {
  brandId: string;
  name: string | null;
  dataset: string | null;
}

/** listBrands: the brands the principal can access, ordered by id. */
export async function listBrands(ctx: OpContext): Promise<{ brands: Brand[] }> {
  const ids = ctx.principal.brandIds;
  if (ids.length === 0) return { brands: [] };
  const { results } = await ctx.env.DB.prepare(
    `SELECT id AS brandId, name, dataset FROM brands WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`,
  )
    .bind(JSON.stringify(ids))
    .all<Brand>();
  return { brands: results };
}
