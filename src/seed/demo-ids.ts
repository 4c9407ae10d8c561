/** The demo tenants' fixed ids and names (docs/demo-data.md); a leaf module, so Node tooling can read them without the seed. */
export const DEMO_ORGS = {
  demo: { id: 'org_demo', name: 'Demo Retail Group' },
  other: { id: 'org_other', name: 'Other Co' },
} as const;

export const DEMO_BRANDS = [
  { id: 'brand_acme', orgId: 'org_demo', name: 'Acme Outdoor', dataset: 'acme', currency: 'USD' },
  { id: 'brand_globex', orgId: 'org_demo', name: 'Globex Coffee', dataset: 'globex', currency: 'EUR' },
  { id: 'brand_initech', orgId: 'org_demo', name: 'Initech Labs', dataset: null, currency: null },
  { id: 'brand_umbrella', orgId: 'org_other', name: 'Umbrella Health', dataset: 'umbrella', currency: 'GBP' },
] as const;

export const DEMO_KEY_IDS = { org: 'key_demo_org', brand: 'key_demo_brand', other: 'key_other_org' } as const;
export const DEMO_USER_IDS = { org: 'user_demo_org_admin', brand: 'user_demo_brand_admin' } as const;
