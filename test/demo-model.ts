import { inject } from 'vitest';
import type { TestKey } from './seed';

/**
 * A small model of docs/demo-data.md's tenants and the three demo keys (the org key of org_demo, the brand key of
 * brand_acme, the other org's key), written apart from the code: the scoping tests derive what each key may see and
 * write from it, never from the SQL that implements the rules.
 */
export const BRAND_ORG: Record<string, string> = {
  brand_acme: 'org_demo',
  brand_globex: 'org_demo',
  brand_initech: 'org_demo',
  brand_umbrella: 'org_other',
};
export const BRANDS = Object.keys(BRAND_ORG);
export const KEYS: TestKey[] = ['org', 'brand', 'other'];
/** The brands each key reaches. */
export const KEY_BRANDS: Record<TestKey, string[]> = {
  org: ['brand_acme', 'brand_globex', 'brand_initech'],
  brand: ['brand_acme'],
  other: ['brand_umbrella'],
};
/** The organization of an organization key; null for the brand key. */
export const KEY_ORG: Record<TestKey, string | null> = { org: 'org_demo', brand: null, other: 'org_other' };

/** Who owns a report or a memory: everyone (system), one organization, or one brand. */
export type Owned = { scope: 'system' } | { scope: 'org'; org: string } | { scope: 'brand'; brand: string };

/** Whether something so owned applies to `brand`: system to every brand, org to its organization's, brand to itself. */
export function appliesTo(o: Owned, brand: string): boolean {
  if (o.scope === 'system') return true;
  if (o.scope === 'org') return BRAND_ORG[brand] === o.org;
  return o.brand === brand;
}

/** The key's brands that something so owned applies to (empty: the key cannot see it). */
export function reachingBrands(key: TestKey, o: Owned): string[] {
  return KEY_BRANDS[key].filter((b) => appliesTo(o, b));
}

/** The demo data's days (docs/demo-data.md): the 400 days ending yesterday, counted from the warehouse's today. */
const today = inject('warehouseToday');
const dayBefore = (n: number) => new Date(Date.parse(`${today}T00:00:00Z`) - n * 86_400_000).toISOString().slice(0, 10);
export const DEMO_COVERAGE = { firstDay: dayBefore(400), lastDay: dayBefore(1) };

/**
 * What the brand listings (REST `GET /v1/data/brands`, MCP `list_brands`) say of each demo brand: its time zone (UTC:
 * none set in the demo), whether it can be queried (a dataset exists), its currency (brand settings; the demo seed
 * records the warehouse's) and the days its tables hold data for.
 */
export const DEMO_BRAND_LISTING = {
  brand_acme: {
    brandId: 'brand_acme',
    name: 'Acme Outdoor',
    dataset: 'acme',
    timezone: 'UTC',
    queryable: true,
    currency: 'USD',
    coverage: DEMO_COVERAGE,
  },
  brand_globex: {
    brandId: 'brand_globex',
    name: 'Globex Coffee',
    dataset: 'globex',
    timezone: 'UTC',
    queryable: true,
    currency: 'EUR',
    coverage: DEMO_COVERAGE,
  },
  brand_initech: {
    brandId: 'brand_initech',
    name: 'Initech Labs',
    dataset: null,
    timezone: 'UTC',
    queryable: false,
    currency: null,
    coverage: null,
  },
  brand_umbrella: {
    brandId: 'brand_umbrella',
    name: 'Umbrella Health',
    dataset: 'umbrella',
    timezone: 'UTC',
    queryable: true,
    currency: 'GBP',
    coverage: DEMO_COVERAGE,
  },
} as const;
