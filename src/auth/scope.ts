import type { Principal } from './principal';
import { ApiError } from '../errors';

/**
 * Resolves the target brand of a request.
 * - brandId given: it must be one of the principal's brands, else 403 FORBIDDEN_BRAND (unknown ids too, so
 *   brand existence never leaks across tenants).
 * - omitted, single-brand principal: that brand.
 * - omitted, org principal: `null` when the operation allows "all brands", else 400 VALIDATION.
 */
export function resolveBrand(p: Principal, brandId: string | undefined, opts: { required: true }): string;
export function resolveBrand(p: Principal, brandId: string | undefined, opts: { required: false }): string | null;
export function resolveBrand(p: Principal, brandId: string | undefined, opts: { required: boolean }): string | null {
  if (brandId !== undefined) {
    if (!p.brandIds.includes(brandId)) {
      throw new ApiError('FORBIDDEN_BRAND', `this key cannot access brand ${JSON.stringify(brandId)}`);
    }
    return brandId;
  }
  if (p.scope === 'brand' && p.brandIds.length === 1) return p.brandIds[0]!;
  if (!opts.required) return null;
  throw new ApiError(
    'VALIDATION',
    'brandId is required for organization keys (list them with GET /v1/data/brands or the list_brands tool)',
    {
      details: { parameter: 'brandId' },
    },
  );
}

/**
 * The brands a listing covers: the one named by `brandId` (or a single-brand principal's), else every brand of the
 * principal. `brand` is the resolved filter (null: all), which cursors bind.
 */
export function listingBrands(p: Principal, brandId: string | undefined): { brand: string | null; brandIds: string[] } {
  const brand = resolveBrand(p, brandId, { required: false });
  return { brand, brandIds: brand === null ? p.brandIds : [brand] };
}
