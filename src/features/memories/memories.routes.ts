import { createRoute } from '@hono/zod-openapi';
import { MEMORY_LIMITS } from './rules';
import { errorResponses, JSON_BODY_ERRORS, jsonBody, okJson, CommonHeaders } from '../../schemas/common';
import { z } from '@hono/zod-openapi';
import {
  CreateMemoryRequestSchema,
  IfMatchHeadersSchema,
  DeletedMemorySchema,
  ListMemoriesQuerySchema,
  MemoryIdParamsSchema,
  MemoryListSchema,
  MemorySchema,
  UpdateMemoryRequestSchema,
} from './memories.schemas';
import type { AppOpenAPI, AppRouteHandler } from '../../app-env';
import { ifMatchVersions, versionETag } from '../../http/etag';
import { createMemory, deleteMemory, getMemory, listMemories, updateMemory } from './memories';
import { opContext } from '../../context';

const TAGS = ['Memories'];

/** A memory's response headers: the common ones and its version as `ETag`. */
const MemoryHeaders = CommonHeaders.extend({
  ETag: z
    .string()
    .openapi({ description: 'The memory\'s `version`, quoted (`"3"`); send it as `If-Match` to write only that version.', example: '"3"' }),
});

/** A 200 JSON answer carrying the memory's ETag. */
function okMemory<T extends z.ZodType>(schema: T, description: string) {
  return { 200: { description, headers: MemoryHeaders, content: { 'application/json': { schema } } } } as const;
}

const IF_MATCH_RULE =
  ' Send the `ETag` you read as `If-Match` to apply the change only if nobody wrote the memory since: otherwise 412 ' +
  '`PRECONDITION_FAILED` (`details.currentVersion`), and nothing is changed.';
const WRITE_RULES =
  "Writing needs an API key created with memory write permission (or an administrator's OAuth connection) and stays " +
  'inside its scope: an organization key writes `org` memories of its organization and `brand` memories of its brands, ' +
  "a brand key its brand's. `system` memories are written only with the admin CLI. Refused writes are 403 " +
  '`MEMORY_WRITE_FORBIDDEN`. Every write is recorded (who, when, what it replaced).';

export const list = createRoute({
  method: 'get',
  path: '/v1/data/memories',
  operationId: 'listMemories',
  tags: TAGS,
  summary: 'List the memories the key can see',
  description:
    "Context about what each table means and how to analyze it. Visibility is the reports' rule: `system` memories reach " +
    'every brand, `org` memories the brands of the organization, `brand` memories that brand. Each memory is listed once, ' +
    'ordered by scope (system, org, brand), owner, creation time and id. Page with `cursor` until `nextCursor` is null.',
  security: [{ bearerAuth: [] }],
  request: { query: ListMemoriesQuerySchema },
  responses: {
    ...okJson(MemoryListSchema, 'One page of memories'),
    ...errorResponses('VALIDATION', 'UNAUTHORIZED', 'FORBIDDEN_BRAND'),
  },
});

export const get = createRoute({
  method: 'get',
  path: '/v1/data/memories/{memoryId}',
  operationId: 'getMemory',
  tags: TAGS,
  summary: 'Get one memory',
  description:
    'One memory in scope for the caller, with its `version` in the `ETag` header: send it back as `If-Match` to update ' +
    'or delete exactly that version.',
  security: [{ bearerAuth: [] }],
  request: { params: MemoryIdParamsSchema },
  responses: {
    ...okMemory(MemorySchema, 'The memory'),
    ...errorResponses('VALIDATION', 'UNAUTHORIZED', 'MEMORY_NOT_FOUND'),
  },
});

export const create = createRoute({
  method: 'post',
  path: '/v1/data/memories',
  operationId: 'createMemory',
  tags: TAGS,
  summary: 'Create a memory',
  description:
    `${WRITE_RULES} Limits: title ${MEMORY_LIMITS.titleChars} characters, content ${MEMORY_LIMITS.contentBytes} bytes of UTF-8 ` +
    `(400 VALIDATION), ${MEMORY_LIMITS.perOwner} memories per brand and per organization (409 MEMORY_LIMIT_EXCEEDED); ` +
    'nothing is cut. `table` is checked as a table name, not looked up in the warehouse.',
  security: [{ bearerAuth: [] }],
  request: { body: jsonBody(CreateMemoryRequestSchema) },
  responses: {
    201: { description: 'The memory was created', headers: MemoryHeaders, content: { 'application/json': { schema: MemorySchema } } },
    ...errorResponses(
      'VALIDATION',
      'UNAUTHORIZED',
      'FORBIDDEN_BRAND',
      'MEMORY_WRITE_FORBIDDEN',
      'MEMORY_LIMIT_EXCEEDED',
      ...JSON_BODY_ERRORS,
    ),
  },
});

export const update = createRoute({
  method: 'patch',
  path: '/v1/data/memories/{memoryId}',
  operationId: 'updateMemory',
  tags: TAGS,
  summary: "Change a memory's title, content or table",
  description: `${WRITE_RULES} A memory visible to the key but outside what it may write (e.g. a \`system\` one) is 403.${IF_MATCH_RULE}`,
  security: [{ bearerAuth: [] }],
  request: {
    params: MemoryIdParamsSchema,
    headers: IfMatchHeadersSchema,
    body: jsonBody(UpdateMemoryRequestSchema),
  },
  responses: {
    ...okMemory(MemorySchema, 'The memory as changed'),
    ...errorResponses(
      'VALIDATION',
      'UNAUTHORIZED',
      'MEMORY_WRITE_FORBIDDEN',
      'MEMORY_NOT_FOUND',
      'PRECONDITION_FAILED',
      ...JSON_BODY_ERRORS,
    ),
  },
});

export const remove = createRoute({
  method: 'delete',
  path: '/v1/data/memories/{memoryId}',
  operationId: 'deleteMemory',
  tags: TAGS,
  summary: 'Delete a memory',
  description:
    `${WRITE_RULES} A deleted memory is invisible at once; an administrator can restore it from the admin ` + `pages.${IF_MATCH_RULE}`,
  security: [{ bearerAuth: [] }],
  request: { params: MemoryIdParamsSchema, headers: IfMatchHeadersSchema },
  responses: {
    ...okMemory(DeletedMemorySchema, 'The memory was deleted'),
    ...errorResponses('VALIDATION', 'UNAUTHORIZED', 'MEMORY_WRITE_FORBIDDEN', 'MEMORY_NOT_FOUND', 'PRECONDITION_FAILED'),
  },
});

const listHandler: AppRouteHandler<typeof list> = async (c) => c.json(await listMemories(opContext('rest'), c.req.valid('query')), 200);

const getHandler: AppRouteHandler<typeof get> = async (c) => {
  const memory = await getMemory(opContext('rest'), c.req.valid('param'));
  return c.json(memory, 200, { ETag: versionETag(memory.version) });
};

const createHandler: AppRouteHandler<typeof create> = async (c) => {
  const memory = await createMemory(opContext('rest'), c.req.valid('json'));
  return c.json(memory, 201, { ETag: versionETag(memory.version) });
};

const updateHandler: AppRouteHandler<typeof update> = async (c) => {
  const expectedVersions = ifMatchVersions(c.req.valid('header')['if-match']);
  const memory = await updateMemory(opContext('rest'), { ...c.req.valid('json'), ...c.req.valid('param'), expectedVersions });
  return c.json(memory, 200, { ETag: versionETag(memory.version) });
};

const removeHandler: AppRouteHandler<typeof remove> = async (c) => {
  const expectedVersions = ifMatchVersions(c.req.valid('header')['if-match']);
  const deleted = await deleteMemory(opContext('rest'), { ...c.req.valid('param'), expectedVersions });
  return c.json(deleted, 200, { ETag: versionETag(deleted.version) });
};

export function registerMemoryRoutes(app: AppOpenAPI) {
  return app
    .openapi(list, listHandler)
    .openapi(create, createHandler)
    .openapi(get, getHandler)
    .openapi(update, updateHandler)
    .openapi(remove, removeHandler);
}
