import { z } from 'zod';
import type { Query } from '../../schemas/catalog';
import { storedQueryParameters } from '../../catalog/template';
import type { OpContext } from '../../context';
import { listingBrands } from '../../auth/scope';

const TablesSchema = z.array(z.string()).nullable();

interface SavedQueryRow {
  id: string;
  brand_id: string;
  name: string | null;
  description: string | null;
  sql: string;
  tables: string | null;
}

/**
 * listSavedQueries: the standalone, concrete saved queries of the target brand. An org principal that omits
 * `brandId` gets those of every brand it can reach (each id is runnable on its own: the run endpoint infers the
 * owning brand); every item names its owning `brandId`, so a mixed list says whose each query is. Ordered by
 * brand, then name, then id.
 */
export async function listSavedQueries(ctx: OpContext, input: { brandId?: string }): Promise<{ queries: Query[] }> {
  const { brandIds } = listingBrands(ctx.principal, input.brandId);
  const { results } = await ctx.env.DB.prepare(
    `SELECT id, brand_id, name, description, sql, tables FROM saved_queries
      WHERE brand_id IN (SELECT value FROM json_each(?)) ORDER BY brand_id, name, id`,
  )
    .bind(JSON.stringify(brandIds))
    .all<SavedQueryRow>();
  return {
    queries: results.map((r) => ({
      id: r.id,
      name: r.name,
      description: r.description,
      sql: r.sql,
      tables: r.tables === null ? null : TablesSchema.parse(JSON.parse(r.tables)),
      parameterized: false,
      parameters: storedQueryParameters('saved', r.sql),
      brandId: r.brand_id,
    })),
  };
}
