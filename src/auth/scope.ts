import type { Principal } from './principal';
import { ApiError } from '../errors';

interface BrandOptions {
  required: boolean;
  /** Who reads a refusal: REST callers are pointed at GET /v1/data/brands, MCP callers at the list_brands tool. */
  transport?: 'rest' | 'mcp';
}

/**
 * Resolves the target brand of a request.
 * - brandId given: it must be one of the principal's brands, else 403 FORBIDDEN_BRAND (unknown ids too, so
 *   brand existence never leaks across tenants).
 * - omitted, and the principal reaches exactly one brand (a brand key, or an organization key or OAuth connection
 *   whose organization has one brand): that brand, where the operation needs one (`required`).
 * - omitted otherwise: `null` when the operation allows "all brands" (listings, an organization-wide data-issue
 *   report), else 400 VALIDATION naming where the brands are listed.
 */
export function resolveBrand(p: Principal, brandId: string | undefined, opts: BrandOptions & { required: true }): string;
export function resolveBrand(p: Principal, brandId: string | undefined, opts: BrandOptions & { required: false }): string | null;
export function resolveBrand(p: Principal, brandId: string | undefined, opts: BrandOptions): string | null {
  if (brandId !== undefined) {
    if (!p.brandIds.includes(brandId)) {
      throw new ApiError('FORBIDDEN_BRAND', `this key cannot access brand ${JSON.stringify(brandId)}`);
    }
    return brandId;
  }
  if (p.scope === 'brand' && p.brandIds.length === 1) return p.brandIds[0]!;
  if (!opts.required) return null;
  if (p.brandIds.length === 1) return p.brandIds[0]!;
  const where = opts.transport === 'mcp' ? 'the list_brands tool lists them' : 'GET /v1/data/brands lists them';
  throw new ApiError('VALIDATION', `brandId is required: these credentials reach ${p.brandIds.length} brands (${where})`, {
    details: { parameter: 'brandId' },
  });
}

/**
 * The brands a listing covers: the one named by `brandId` (or a single-brand principal's), else every brand of the
 * principal. `brand` is the resolved filter (null: all), which cursors bind.
 */
export function listingBrands(p: Principal, brandId: string | undefined): { brand: string | null; brandIds: string[] } {
  const brand = resolveBrand(p, brandId, { required: false });
  return { brand, brandIds: brand === null ? p.brandIds : [brand] };
}
