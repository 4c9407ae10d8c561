import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../src/errors';
import { argumentsRequest, RunQueryRequestSchema } from '../src/features/query/run-query.input';
import { connectMcp, errorOf } from './mcp-client';
import { postJson, seedDemo, TEST_KEYS } from './seed';

// run_query's input is defined once (src/features/query/run-query.input.ts): one rule decides which request a value
// is, and REST's body and the MCP tool's arguments both answer through it. These tests hold the two surfaces to it.

/** A valid value for each field, so that only the combination can be wrong. */
const VALUES = {
  sql: 'SELECT 1 AS x',
  queryId: 'rq_overview_kpis',
  period: { cadence: 'DAILY' },
  brandId: 'brand_acme',
  dryRun: true,
} as const;
const REQUEST_FIELDS = Object.keys(VALUES) as (keyof typeof VALUES)[];

/** Every combination of `names`, each field with its valid value. */
function combinations(names: readonly string[]): Record<string, unknown>[] {
  return names.reduce<Record<string, unknown>[]>(
    (all, name) => all.flatMap((c) => [c, { ...c, [name]: name === 'cursor' ? 'a-cursor' : VALUES[name as keyof typeof VALUES] }]),
    [{}],
  );
}

/** What the tool makes of `args`: the request, or the VALIDATION error's words (anything else is a bug). */
function toolVerdict(args: Record<string, unknown>) {
  try {
    return { accepted: argumentsRequest(args as Parameters<typeof argumentsRequest>[0]) };
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'VALIDATION') throw err;
    return { refused: err.message };
  }
}

describe('one rule, two projections', () => {
  it.each(combinations(REQUEST_FIELDS).map((body) => [JSON.stringify(body), body]))(
    '%s: the tool accepts it as a run exactly when REST accepts the body, as the same request',
    (_, body) => {
      const rest = RunQueryRequestSchema.safeParse(body);
      const tool = toolVerdict(body);
      expect('accepted' in tool, JSON.stringify(tool)).toBe(rest.success);
      if (rest.success) expect(tool.accepted).toEqual({ run: rest.data });
    },
  );

  it('a cursor stands alone in the tool: with any request field it is refused, naming that field', () => {
    for (const fields of combinations(REQUEST_FIELDS)) {
      const verdict = toolVerdict({ ...fields, cursor: 'a-cursor' });
      const first = REQUEST_FIELDS.find((f) => f in fields);
      if (first === undefined) expect(verdict).toEqual({ accepted: { page: { cursor: 'a-cursor' } } });
      else expect(verdict).toEqual({ refused: `send cursor alone: it already names the result (remove ${first})` });
    }
  });
});

describe('the same bad shapes, refused on the wire by both surfaces in their words', () => {
  let client: Client;
  beforeAll(async () => {
    await seedDemo();
    client = await connectMcp(TEST_KEYS.brand);
  });
  afterAll(() => client.close());

  const ONE_OF = 'send exactly one of sql (raw SQL), queryId (a stored query id) or cursor (the next page of a result)';
  const CASES = [
    {
      shape: 'both sql and queryId (period too)',
      input: { sql: VALUES.sql, queryId: VALUES.queryId, period: VALUES.period },
      rest: ['invalid request body: send either sql or queryId, not both', '(body)', 'send either sql or queryId, not both'],
      tool: [ONE_OF, 'queryId', 'send sql or queryId, not both'],
    },
    {
      shape: 'neither',
      input: { brandId: VALUES.brandId, dryRun: true },
      rest: ['invalid request body: sql or queryId is required', '(body)', 'sql or queryId is required'],
      tool: [ONE_OF, '(arguments)', 'send sql, queryId or cursor'],
    },
    {
      shape: 'period with raw sql',
      input: { sql: VALUES.sql, period: VALUES.period },
      // REST's closed RawSqlQuery has no period: the shape the caller meant names it as unknown.
      rest: ['invalid request body: Unrecognized key: "period"', '(body)', 'Unrecognized key: "period"'],
      tool: ['period applies to stored queries only; put the dates into the SQL itself', 'period', 'not allowed with sql'],
    },
  ] as const;

  it.each(CASES)('$shape', async ({ input, rest, tool }) => {
    const res = await postJson('/v1/data/query', 'brand', input);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: { code: 'VALIDATION', message: rest[0], details: { in: 'body', issues: [{ path: rest[1], message: rest[2] }] } },
    });
    const error = errorOf(await client.callTool({ name: 'run_query', arguments: input }));
    expect(error).toMatchObject({
      code: 'VALIDATION',
      message: tool[0],
      details: { in: 'arguments', issues: [{ path: tool[1], message: tool[2] }] },
    });
  });

  it("REST refuses a body that is no object as neither shape, and a body of one shape with that shape's issues", async () => {
    for (const body of [[], 'sql', null]) {
      const res = await postJson('/v1/data/query', 'brand', body);
      expect(res.body).toMatchObject({ error: { code: 'VALIDATION', message: 'invalid request body: sql or queryId is required' } });
    }
    // The stored shape's own issue, not the union's list of both branches.
    const res = await postJson('/v1/data/query', 'brand', { queryId: VALUES.queryId, dryRun: 'yes' });
    expect(res.body).toMatchObject({
      error: { details: { issues: [{ path: 'dryRun', message: 'Invalid input: expected boolean, received string' }] } },
    });
  });
});
