import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, postJson, seedDemo } from './seed';

beforeAll(async () => {
  await seedDemo();
});

/**
 * Findings of the security review, each pinned by the behaviour a caller sees.
 * A stored query the caller's brands cannot see must answer exactly like an unknown id (404), whatever else the
 * request omits: any other answer tells one tenant which query ids another tenant has.
 */
describe('stored-query ids of other tenants do not leak', () => {
  it.each([
    ["another org's org report section, brandId omitted", 'other', 'rq_mix_share'],
    ["another org's org report section, brandId omitted (other way round)", 'org', 'rq_other_kpis'],
    ['an unknown id, brandId omitted', 'other', 'rq_does_not_exist'],
  ] as const)('%s is 404 QUERY_NOT_FOUND', async (_, key, queryId) => {
    expectError(await postJson('/v1/data/query', key, { queryId, dryRun: true }), 404, 'QUERY_NOT_FOUND');
  });

  it('a section the org key can see still asks for brandId (400 VALIDATION); a key of one brand runs it there', async () => {
    expectError(await postJson('/v1/data/query', 'org', { queryId: 'rq_mix_share', dryRun: true }), 400, 'VALIDATION');
    // org_other's key reaches one brand only, so its own section runs there without brandId (issue 39).
    const own = await postJson('/v1/data/query', 'other', { queryId: 'rq_other_kpis', dryRun: true });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ brandId: 'brand_umbrella' });
  });
});
