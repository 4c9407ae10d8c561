import { SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApp } from '../src/app';
import { SERVICE } from '../src/composition';
import { ERROR_STATUS } from '../src/errors';
import { expectError, postJson, seedDemo } from './seed';

/** Enough of an OpenAPI 3.1 document to walk it; everything else stays unknown. */
const ResponseSchema = z.object({
  description: z.string(),
  headers: z.record(z.string(), z.unknown()).optional(),
  content: z.record(z.string(), z.object({ schema: z.unknown() })).optional(),
});
const OperationSchema = z.object({
  operationId: z.string(),
  summary: z.string().optional(),
  description: z.string().optional(),
  security: z.array(z.record(z.string(), z.array(z.string()))).optional(),
  parameters: z.array(z.object({ name: z.string(), in: z.string(), required: z.boolean().optional(), schema: z.unknown() })).optional(),
  requestBody: z.object({ required: z.boolean().optional(), content: z.record(z.string(), z.object({ schema: z.unknown() })) }).optional(),
  responses: z.record(z.string(), ResponseSchema),
});
const DocSchema = z.object({
  openapi: z.string(),
  info: z.object({ title: z.string(), version: z.string() }),
  security: z.array(z.record(z.string(), z.array(z.string()))).optional(),
  paths: z.record(z.string(), z.record(z.string(), OperationSchema)),
  components: z.object({
    schemas: z.record(z.string(), z.record(z.string(), z.unknown())),
    securitySchemes: z.record(z.string(), z.unknown()),
  }),
});
type Doc = z.infer<typeof DocSchema>;

let doc: Doc;
let res: Response;

beforeAll(async () => {
  res = await SELF.fetch('http://api.test/v1/data/openapi.json');
  doc = DocSchema.parse(await res.json());
});

/** Spec operations with the error codes each can return (its own plus INTERNAL for anything unforeseen). */
const OPERATIONS = {
  listBrands: { method: 'get', path: '/v1/data/brands', errors: { 401: ['UNAUTHORIZED'] } },
  listReports: {
    method: 'get',
    path: '/v1/data/reports',
    errors: { 400: ['VALIDATION'], 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN_BRAND'] },
  },
  getReport: {
    method: 'get',
    path: '/v1/data/reports/{reportId}',
    errors: { 400: ['VALIDATION'], 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN_BRAND'], 404: ['REPORT_NOT_FOUND'] },
  },
  listReportQueries: {
    method: 'get',
    path: '/v1/data/reports/{reportId}/queries',
    errors: { 400: ['VALIDATION'], 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN_BRAND'], 404: ['REPORT_NOT_FOUND'] },
  },
  listSavedQueries: {
    method: 'get',
    path: '/v1/data/queries',
    errors: { 400: ['VALIDATION'], 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN_BRAND'] },
  },
  submitFeedback: {
    method: 'post',
    path: '/v1/data/feedback',
    errors: {
      400: ['VALIDATION'],
      401: ['UNAUTHORIZED'],
      403: ['FORBIDDEN_BRAND'],
      413: ['PAYLOAD_TOO_LARGE'],
      415: ['UNSUPPORTED_MEDIA_TYPE'],
    },
  },
} as const;

function op(id: keyof typeof OPERATIONS) {
  const { method, path } = OPERATIONS[id];
  const o = doc.paths[path]?.[method];
  if (!o) throw new Error(`${method.toUpperCase()} ${path} is not in the document`);
  return o;
}

function schema(name: string) {
  const s = doc.components.schemas[name];
  if (!s) throw new Error(`component ${name} is missing`);
  return s;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

describe('GET /v1/data/openapi.json', () => {
  it('serves OpenAPI 3.1.0, version 1.0.0, without a key, with x-request-id', () => {
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
  });

  it('declares the bearer scheme and requires it on every operation', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    for (const id of Object.keys(OPERATIONS) as (keyof typeof OPERATIONS)[]) {
      expect(op(id).security, id).toEqual([{ bearerAuth: [] }]);
    }
  });

  it('has every spec operationId at its spec path and method', () => {
    for (const id of Object.keys(OPERATIONS) as (keyof typeof OPERATIONS)[]) {
      expect(op(id).operationId).toBe(id);
    }
  });

  it('documents every /v1/data route the app serves, and nothing it does not serve', () => {
    const served = new Set(
      createApp(SERVICE)
        .routes.filter((r) => r.path.startsWith('/v1/data/') && r.method !== 'ALL' && !r.path.includes('*'))
        .filter((r) => r.path !== '/v1/data/openapi.json')
        .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:([A-Za-z_]\w*)/g, '{$1}')}`),
    );
    const documented = new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`)));
    expect([...documented].sort()).toEqual([...served].sort());
    for (const { method, path } of Object.values(OPERATIONS)) expect(documented).toContain(`${method} ${path}`);
  });

  it('names the spec components', () => {
    for (const name of ['Brand', 'Report', 'ReportDetail', 'Query', 'RunQueryResponse', 'FeedbackRequest', 'FeedbackResponse', 'Error']) {
      expect(doc.components.schemas, name).toHaveProperty(name);
    }
  });

  it('documents every error response each operation can return, with the Error schema and x-request-id', () => {
    for (const [id, { errors }] of Object.entries(OPERATIONS) as [
      keyof typeof OPERATIONS,
      (typeof OPERATIONS)[keyof typeof OPERATIONS],
    ][]) {
      const responses = op(id).responses;
      const documented = Object.keys(responses)
        .filter((s) => s !== '200')
        .sort();
      expect(documented, id).toEqual([...Object.keys(errors), '500'].sort());
      for (const [status, codes] of Object.entries({ ...errors, 500: ['INTERNAL'] })) {
        const r = responses[status];
        expect(r?.content?.['application/json']?.schema, `${id} ${status}`).toEqual(ref('Error'));
        for (const code of codes) expect(r?.description, `${id} ${status}`).toContain(`\`${code}\``);
        expect(r?.headers, `${id} ${status}`).toHaveProperty('x-request-id');
      }
      expect(responses['200']?.headers, id).toHaveProperty('x-request-id');
    }
  });

  it("has runQuery at POST /v1/data/query with a JSON body, RunQueryResponse, bearer auth and the spec's error statuses", () => {
    const run = doc.paths['/v1/data/query']?.post;
    expect(run?.operationId).toBe('runQuery');
    expect(run?.security).toEqual([{ bearerAuth: [] }]);
    expect(run?.requestBody).toMatchObject({ required: true, content: { 'application/json': {} } });
    expect(run?.responses['200']?.content?.['application/json']?.schema).toEqual(ref('RunQueryResponse'));
    // Spec: 400 invalid SQL / too expensive / failed, 401, 403 brand or table, 404 unknown queryId, 429 usage.
    expect(Object.keys(run?.responses ?? {})).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404', '429', '500']));
    const codes: [string, string][] = [
      ['400', 'INVALID_SQL'],
      ['400', 'QUERY_TOO_EXPENSIVE'],
      ['400', 'QUERY_FAILED'],
      ['400', 'VALIDATION'],
      ['403', 'FORBIDDEN_BRAND'],
      ['403', 'FORBIDDEN_TABLE'],
      ['404', 'QUERY_NOT_FOUND'],
      ['429', 'USAGE_LIMIT_EXCEEDED'],
    ];
    for (const [status, code] of codes) {
      expect(run?.responses[status]?.description, `${status} ${code}`).toContain(code);
      expect(run?.responses[status]?.content?.['application/json']?.schema, status).toEqual(ref('Error'));
    }
  });

  it('names in Field.type the type spellings runs actually return (BigQuery REST names, not INT64/FLOAT64/BOOL)', async () => {
    await seedDemo();
    const run = await postJson('/v1/data/query', 'brand', {
      sql: "SELECT 1 AS i, 1.5 AS f, TRUE AS b, 'x' AS s, DATE '2026-01-01' AS d, NUMERIC '1.1' AS n",
    });
    expect(run.status).toBe(200);
    const returned = z
      .object({ schema: z.array(z.object({ type: z.string() })) })
      .parse(run.body)
      .schema.map((f) => f.type);
    expect(returned).toEqual(['INTEGER', 'FLOAT', 'BOOLEAN', 'STRING', 'DATE', 'NUMERIC']);
    const field = z.object({ properties: z.object({ type: z.object({ description: z.string() }) }) }).parse(schema('Field'));
    const listed = field.properties.type.description.match(/\b[A-Z][A-Z0-9_]+\b/g) ?? [];
    for (const t of returned) expect(listed, t).toContain(t);
    for (const alias of ['INT64', 'FLOAT64', 'BOOL']) expect(listed, alias).not.toContain(alias);
  });

  it('describes the Error body as the spec does', () => {
    expect(schema('Error')).toMatchObject({
      type: 'object',
      required: ['error'],
      properties: { error: { type: 'object', required: ['code', 'message', 'requestId'] } },
    });
  });

  it('describes Report, ReportDetail and Query with the spec fields and required sets', () => {
    expect(schema('Report')).toMatchObject({
      // The spec's fields plus the `runnable` extension (say when a brand cannot run its reports yet).
      required: ['reportId', 'brandId', 'name', 'description', 'queryCount', 'type', 'runnable'],
      properties: {
        type: { type: 'string', enum: ['system', 'org', 'brand'] },
        description: { type: ['string', 'null'] },
        runnable: { type: 'boolean', description: expect.stringContaining('BRAND_NOT_PROVISIONED') },
      },
    });
    const detail = JSON.stringify(schema('ReportDetail'));
    for (const field of ['instructions', 'dashboardConfig']) expect(detail).toContain(`"${field}"`);
    expect(detail).toMatch(/"required":\[[^\]]*"dashboardConfig"/);
    expect(schema('Query')).toMatchObject({
      required: ['id', 'name', 'description', 'sql', 'tables', 'parameterized', 'parameters'],
      properties: {
        tables: { type: ['array', 'null'], items: { type: 'string' } },
        parameters: { type: 'array', items: { type: 'string' } },
      },
    });
    expect(Object.keys(schema('Query').properties ?? {}).sort()).toEqual(
      [
        'brandId',
        'chartSpec',
        'description',
        'id',
        'name',
        'narrativeHints',
        'ordinal',
        'parameterized',
        'parameters',
        'sql',
        'tables',
      ].sort(),
    );
    // The saved-query owner is an optional extension, documented where a client reads it.
    expect(schema('Query')).toMatchObject({
      properties: { brandId: { type: 'string', description: expect.stringContaining('saved queries only') } },
    });
    expect(op('listSavedQueries').description).toMatch(/brandId/);
    expect(op('listReports').responses['200']?.content?.['application/json']?.schema).toMatchObject({
      required: ['reports', 'nextCursor', 'hasMore'],
      properties: { reports: { type: 'array', items: ref('Report') } },
    });
    expect(op('getReport').responses['200']?.content?.['application/json']?.schema).toEqual(ref('ReportDetail'));
    for (const id of ['listReportQueries', 'listSavedQueries'] as const) {
      expect(op(id).responses['200']?.content?.['application/json']?.schema).toMatchObject({
        properties: { queries: { items: ref('Query') } },
      });
    }
  });

  it('documents the listReports parameters with their rules', () => {
    const params = Object.fromEntries((op('listReports').parameters ?? []).map((p) => [p.name, p]));
    expect(Object.keys(params).sort()).toEqual(['brandId', 'cursor', 'limit', 'type']);
    expect(params.limit).toMatchObject({ in: 'query', schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } });
    expect(params.type).toMatchObject({ in: 'query', schema: { enum: ['system', 'org', 'brand'] } });
    for (const p of Object.values(params)) expect(p.required ?? false).toBe(false);
    const get = Object.fromEntries((op('getReport').parameters ?? []).map((p) => [p.name, p]));
    expect(get.reportId).toMatchObject({ in: 'path', required: true });
    expect(get.brandId).toMatchObject({ in: 'query' });
  });

  describe('closed, exclusive shapes for generated clients', () => {
    /** A closed object shape from the document: which keys it requires and which it allows. */
    const ClosedShape = z.object({
      type: z.literal('object'),
      properties: z.record(z.string(), z.unknown()),
      required: z.array(z.string()).default([]),
      additionalProperties: z.literal(false),
    });
    const Branches = z.object({ oneOf: z.array(z.unknown()).min(2) });
    const Ref = z.object({ $ref: z.string() });

    function resolve(node: unknown): z.infer<typeof ClosedShape> {
      const r = Ref.safeParse(node);
      return ClosedShape.parse(r.success ? schema(r.data.$ref.replace('#/components/schemas/', '')) : node);
    }

    /** How many of the oneOf's closed shapes a value's keys fit: a valid value fits exactly one. */
    function fits(node: unknown, value: Record<string, unknown>): number {
      return Branches.parse(node)
        .oneOf.map(resolve)
        .filter((shape) => {
          const keys = Object.keys(value);
          return shape.required.every((k) => keys.includes(k)) && keys.every((k) => k in shape.properties);
        }).length;
    }

    const BAD_BODIES: [string, Record<string, unknown>][] = [
      ['sql and queryId', { sql: 'SELECT 1', queryId: 'sq_acme_monthly_kpis' }],
      ['sql and period', { sql: 'SELECT 1', period: { cadence: 'DAILY' } }],
      ['neither', { brandId: 'brand_acme' }],
    ];

    it('runQuery body: a oneOf of the two closed shapes', () => {
      const body = schema('RunQueryRequest');
      expect(body).not.toHaveProperty('anyOf');
      expect(Branches.parse(body).oneOf).toEqual([ref('RawSqlQuery'), ref('StoredQuery')]);
      expect(resolve(ref('RawSqlQuery')).required).toEqual(['sql']);
      expect(resolve(ref('StoredQuery')).required).toEqual(['queryId']);
      expect(fits(body, { sql: 'SELECT 1', brandId: 'b', dryRun: true })).toBe(1);
      expect(fits(body, { queryId: 'q', period: { cadence: 'DAILY' } })).toBe(1);
      for (const [name, value] of BAD_BODIES) expect(fits(body, value), name).toBe(0);
    });

    it('period: a oneOf of { cadence } and { startDate, endDate }, both dates required together', () => {
      const period = schema('Period');
      const shapes = Branches.parse(period).oneOf.map(resolve);
      expect(shapes.map((s) => s.required)).toEqual([['cadence'], ['startDate', 'endDate']]);
      expect(fits(period, { cadence: 'WEEKLY' })).toBe(1);
      expect(fits(period, { startDate: '2026-10-01', endDate: '2026-10-31' })).toBe(1);
      expect(fits(period, { startDate: '2026-10-01' })).toBe(0);
      expect(fits(period, { cadence: 'DAILY', endDate: '2026-10-31' })).toBe(0);
    });

    it.each([
      ...BAD_BODIES,
      ['a period with one date', { queryId: 'rq_overview_kpis', brandId: 'brand_acme', period: { startDate: '2026-10-01' } }],
      [
        'a cadence with a date',
        { queryId: 'rq_overview_kpis', brandId: 'brand_acme', period: { cadence: 'DAILY', endDate: '2026-10-31' } },
      ],
    ])('the server refuses what the document refuses: %s is 400 VALIDATION', async (_name, body) => {
      await seedDemo();
      expectError(await postJson('/v1/data/query', 'org', body), 400, 'VALIDATION');
    });

    it('Error.code is an enum of every code the API returns', () => {
      const code = z
        .object({ properties: z.object({ error: z.object({ properties: z.object({ code: z.object({ enum: z.array(z.string()) }) }) }) }) })
        .parse(schema('Error')).properties.error.properties.code;
      expect([...code.enum].sort()).toEqual(Object.keys(ERROR_STATUS).sort());
    });

    it('says how INT64 and NUMERIC values come back (numbers up to 2^53, strings above; NUMERIC always a string)', async () => {
      const rows = z.object({ properties: z.object({ rows: z.object({ description: z.string() }) }) }).parse(schema('RunQueryResponse'))
        .properties.rows.description;
      expect(rows).toMatch(/INT64\) is a number within ±\(2\^53 − 1\) and the exact decimal string beyond/);
      expect(rows).toMatch(/NUMERIC and BIGNUMERIC are always the exact decimal string/);
      // And that is what a run returns.
      await seedDemo();
      const run = await postJson('/v1/data/query', 'brand', {
        sql: "SELECT 9007199254740991 AS safe, 9007199254740993 AS big, NUMERIC '1.5' AS n",
      });
      expect(run.status, JSON.stringify(run.body)).toBe(200);
      expect(run.body).toMatchObject({ rows: [{ safe: 9007199254740991, big: '9007199254740993', n: '1.5' }] });
    });
  });

  it('describes FeedbackRequest strictly: summary required, enums for severity and roles, no extra properties', () => {
    expect(op('submitFeedback').requestBody).toMatchObject({
      required: true,
      content: { 'application/json': { schema: ref('FeedbackRequest') } },
    });
    expect(schema('FeedbackRequest')).toMatchObject({
      type: 'object',
      required: ['summary'],
      additionalProperties: false,
      properties: {
        summary: { type: 'string', minLength: 1, maxLength: 2000 },
        severity: { type: 'string', enum: ['low', 'medium', 'high'] },
        transcript: {
          type: 'array',
          maxItems: 100,
          items: {
            required: ['role', 'content'],
            additionalProperties: false,
            properties: { role: { enum: ['user', 'assistant', 'tool'] } },
          },
        },
      },
    });
    expect(schema('FeedbackResponse')).toMatchObject({ required: ['feedbackRef'], properties: { feedbackRef: { type: 'string' } } });
  });
});
