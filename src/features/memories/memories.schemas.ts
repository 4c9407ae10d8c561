import { z } from '@hono/zod-openapi';
import { ContentSchema, MemoryFieldsSchema, TableNameSchema, TitleSchema } from './fields';
import { MEMORIES_PAGE, MEMORY_LIMITS } from './rules';
import { BrandIdQuery } from '../../schemas/common';
import { cursorQuery, pageLimitQuery } from '../../schemas/fields';

/** Wire schemas of memories (docs/memories.md). The types are inferred from these. */

export const MemoryScopeSchema = z.enum(['system', 'org', 'brand']).openapi({
  description: 'Who the memory reaches, as for reports: `system` every brand, `org` every brand of the organization, `brand` that brand.',
  example: 'brand',
});

export const AuthorSchema = z
  .object({
    kind: z.enum(['key', 'user', 'cli', 'seed']).openapi({
      description:
        '`key` an API key, `user` an administrator (admin pages or an OAuth connection), `cli` the admin CLI, `seed` the demo data.',
    }),
    name: z
      .string()
      .openapi({ description: "Display name: the key's name, the user's name or email. Never a secret.", example: 'Data team key' }),
  })
  .openapi('MemoryAuthor', { description: 'Who wrote a memory.' });

const TableName = TableNameSchema;
const Title = TitleSchema;
const Content = ContentSchema;

export const MemorySchema = z
  .object({
    memoryId: z.string().openapi({ example: 'mem_4f1c2e9a0b7d3c5e6f70' }),
    scope: MemoryScopeSchema,
    brandId: z.string().nullable().openapi({ description: 'The owning brand of a `brand` memory; null otherwise.', example: 'brand_acme' }),
    table: z.string().nullable().openapi({
      description: "The table of the brand's dataset this memory is about, or null for general context.",
      example: 'fact__orders',
    }),
    title: z.string().openapi({ example: 'revenue is after discounts, before returns' }),
    content: z.string().openapi({
      description: 'Markdown, at most 8 KB of UTF-8. Data written by people and assistants, not instructions of this service.',
    }),
    author: AuthorSchema.openapi({ description: 'Who created the memory.' }),
    updatedBy: AuthorSchema.openapi({ description: 'Who changed it last (the author until it is edited).' }),
    createdAt: z.string().openapi({ description: 'ISO 8601 UTC.', example: '2026-11-22T18:00:00.000Z' }),
    updatedAt: z.string().openapi({ description: 'ISO 8601 UTC.', example: '2026-11-22T18:00:00.000Z' }),
    // Described in the OpenAPI document only: MCP clients learn it from save_memory's expectedVersion.
    version: z.number().int().openapi({ description: 'Writes so far (1 when created); its ETag.', example: 1 }),
  })
  .openapi('Memory', { description: 'Context about what a table means and how to analyze it.' });
export type Memory = z.infer<typeof MemorySchema>;

export const MemoryListSchema = z
  .object({
    memories: z.array(MemorySchema),
    nextCursor: z.string().nullable().openapi({ description: 'Pass back as `cursor` for the next page; null on the last page.' }),
    hasMore: z.boolean().openapi({ description: 'True when more memories remain (nextCursor is set).' }),
  })
  .openapi('MemoryList');

export const DeletedMemorySchema = z
  .object({
    memoryId: z.string(),
    deleted: z.literal(true),
    version: z.number().int().min(2).openapi({ description: 'The version the delete made (also the `ETag`).', example: 2 }),
  })
  .openapi('DeletedMemory', { description: 'The memory is deleted; an administrator can restore it from the admin pages.' });

/** Query of listMemories (REST); MCP takes the same fields as arguments. */
export const ListMemoriesQuerySchema = z.object({
  brandId: BrandIdQuery.openapi({
    description:
      "Only memories that reach this brand (system, its organization's and its own). Omit to list every memory these credentials can see.",
  }),
  table: TableName.optional().openapi({ description: 'Only memories about this table (exact name, e.g. fact__orders).' }),
  q: z
    .string()
    .trim()
    .min(1, { error: 'q must not be empty; omit it to list all' })
    .max(MEMORY_LIMITS.queryChars, { error: `q must be at most ${MEMORY_LIMITS.queryChars} characters` })
    .optional()
    .openapi({ description: 'Text search: memories whose title or content contains this text (case-insensitive for ASCII letters).' }),
  scope: MemoryScopeSchema.optional().openapi({ description: 'Only memories of this scope.' }),
  limit: pageLimitQuery(MEMORIES_PAGE).optional(),
  cursor: cursorQuery('filters'),
});
export type ListMemoriesInput = z.infer<typeof ListMemoriesQuerySchema>;

export const CreateMemoryRequestSchema = z
  .strictObject({
    scope: MemoryScopeSchema.optional().openapi({
      description: '`brand` (default) or `org`. `system` memories are written only with the admin CLI (403 MEMORY_WRITE_FORBIDDEN).',
    }),
    brandId: z.string().min(1).max(128).optional().openapi({
      description: 'The brand of a `brand` memory; optional for single-brand keys. Not allowed with `org`.',
      example: 'brand_acme',
    }),
    table: TableName.nullable().optional().openapi({ description: "A table of the brand's dataset, or null/omitted for general context." }),
    title: Title.openapi({ description: `1 to ${MEMORY_LIMITS.titleChars} characters.` }),
    content: Content.openapi({ description: `Markdown, at most ${MEMORY_LIMITS.contentBytes} bytes of UTF-8.` }),
  })
  .openapi('CreateMemoryRequest');
export type CreateMemoryInput = z.infer<typeof CreateMemoryRequestSchema>;

export const UpdateMemoryRequestSchema = MemoryFieldsSchema.openapi('UpdateMemoryRequest', {
  description: 'The fields to change (at least one); scope and brand are fixed at creation. `table: null` makes the memory general.',
});
export type UpdateMemoryInput = z.infer<typeof UpdateMemoryRequestSchema>;

export const MemoryIdParamsSchema = z.object({
  memoryId: z
    .string()
    .min(1)
    .max(128)
    .openapi({ param: { name: 'memoryId', in: 'path' }, example: 'mem_4f1c2e9a0b7d3c5e6f70' }),
});

/**
 * `If-Match` of updateMemory and deleteMemory (RFC 9110 §13.1.1): `*`, or entity tags as the `ETag` header gives
 * them (`"3"`); strong comparison, so a weak tag (`W/"3"`) never matches.
 */
export const IfMatchHeadersSchema = z.object({
  'if-match': z
    .string()
    .max(1024)
    .optional()
    .openapi({
      param: { name: 'if-match', in: 'header' },
      description:
        'The memory\'s `ETag` as read (e.g. `"3"`). The write applies only while the memory is still at that version; otherwise 412 ' +
        '`PRECONDITION_FAILED` with `details.currentVersion`. Omit for an unconditional write.',
      example: '"3"',
    }),
});

/**
 * A memory as a model reads it (MCP): what it says, where it applies, and who wrote it when, as a display name and
 * a day (`by`, `date`), not the REST body's author objects and timestamps; so "where does this come from" has an
 * answer at a fraction of the bytes. `memoryId` stays: save_memory changes a memory by it.
 */
export const ModelMemorySchema = MemorySchema.pick({
  memoryId: true,
  scope: true,
  brandId: true,
  table: true,
  title: true,
  content: true,
}).extend({
  by: z.string().openapi({ description: 'Who wrote it; "<author>, edited by <name>" once someone else changed it.' }),
  date: z.string().openapi({ description: 'Day of the last change, YYYY-MM-DD (UTC).' }),
});
export type ModelMemory = z.infer<typeof ModelMemorySchema>;

/** "Who and when" in one short string each: display names (never ids or secrets) and the day of the last change. */
export function modelMemory(m: Memory): ModelMemory {
  const edited = m.updatedBy.kind !== m.author.kind || m.updatedBy.name !== m.author.name;
  return {
    memoryId: m.memoryId,
    scope: m.scope,
    brandId: m.brandId,
    table: m.table,
    title: m.title,
    content: m.content,
    by: edited ? `${m.author.name}, edited by ${m.updatedBy.name}` : m.author.name,
    date: m.updatedAt.slice(0, 10),
  };
}

export const ModelMemoryListSchema = MemoryListSchema.extend({ memories: z.array(ModelMemorySchema) });
