import { z } from 'zod';
import type { Memory } from './memories.schemas';
import { MEMORY_LIMITS, type MemoryOwner } from './rules';

/**
 * The SQL of every memory write, built once and run three ways: bound to D1 by the operations and the admin pages,
 * and inlined as literals (`inlineStatement`) by the admin CLI (`wrangler d1 execute`) and the demo seed. So a write
 * and its `memory_revisions` row are the same whoever makes them. Pure: builds statements, runs nothing.
 *
 * Each write is two statements run together (a D1 batch is one transaction): the revision row first, inserted only
 * when the write applies (the memory is live, or deleted for a restore, and the owner is under its limit), then
 * the change itself, applied only if that revision row exists. So no change goes unrecorded and a refused write
 * changes nothing. A create inserts the memory first (its revision references it) under the same guard.
 */

type Literal = string | number | null;

/** SQL with `?N` placeholders and their values (`params[N - 1]`). */
export interface Statement {
  sql: string;
  params: Literal[];
}

export type ActorKind = 'key' | 'user' | 'cli' | 'seed';

/** Who writes: the kind, the key or user id (null for cli and seed), a display name (never a secret). */
export interface Actor {
  kind: ActorKind;
  id: string | null;
  name: string;
}

/** One write's record: a fresh revision id, who, through what, in which request, when. */
export interface WriteMeta {
  revisionId: string;
  actor: Actor;
  /** rest | mcp | admin | cli | seed */
  transport: string;
  requestId: string | null;
  now: number;
}

export interface NewMemory extends MemoryOwner {
  id: string;
  table: string | null;
  title: string;
  content: string;
}

export interface MemoryPatch {
  title?: string;
  content?: string;
  /** undefined = unchanged; null = general (no table). */
  table?: string | null;
}

/** The state a revision records (JSON text in before_json / after_json). */
const STATE = `json_object('title', title, 'table', table_name, 'content', content, 'deletedAt', deleted_at)`;
const REVISION_COLUMNS =
  'id, memory_id, action, before_json, after_json, actor_kind, actor_id, actor_name, transport, request_id, created_at';
/** The version of the memory row `m`: how many revisions it has. */
export const VERSION_OF_M = `(SELECT count(*) FROM memory_revisions v WHERE v.memory_id = m.id)`;
/** Live memories of the same owner as the row `m` (scope + org + brand), for the per-owner limit. */
const LIVE_OF_OWNER =
  `(SELECT count(*) FROM memories o WHERE o.deleted_at IS NULL AND o.scope = m.scope AND o.org_id IS m.org_id AND` +
  ` o.brand_id IS m.brand_id)`;

/** Actor kind, id, name, transport, request id, now. */
function metaParams(w: WriteMeta): Literal[] {
  return [w.actor.kind, w.actor.id, w.actor.name, w.transport, w.requestId, w.now];
}

/**
 * Creates a memory unless its owner already has `MEMORY_LIMITS.perOwner` live ones, or the id exists (then
 * nothing happens: the demo seed's insert-if-missing). Both statements return the new id when they applied.
 */
export function createMemoryStatements(m: NewMemory, w: WriteMeta): Statement[] {
  return [
    {
      sql: `INSERT INTO memories (id, scope, org_id, brand_id, table_name, title, content, author_kind, author_id, author_name,
                                  updated_by_kind, updated_by_id, updated_by_name, created_at, updated_at)
            SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?8, ?9, ?10, ?13, ?13
             WHERE (SELECT count(*) FROM memories o
                     WHERE o.deleted_at IS NULL AND o.scope = ?2 AND o.org_id IS ?3 AND o.brand_id IS ?4) < ?14
            ON CONFLICT(id) DO NOTHING RETURNING id`,
      params: [m.id, m.scope, m.orgId, m.brandId, m.table, m.title, m.content, ...metaParams(w), MEMORY_LIMITS.perOwner],
    },
    {
      sql: `INSERT INTO memory_revisions (${REVISION_COLUMNS})
            SELECT ?1, m.id, 'create', NULL, ${STATE}, ?3, ?4, ?5, ?6, ?7, ?8 FROM memories m
             WHERE m.id = ?2 AND NOT EXISTS (SELECT 1 FROM memory_revisions r WHERE r.memory_id = ?2)
            ON CONFLICT(id) DO NOTHING RETURNING memory_id AS id`,
      params: [w.revisionId, m.id, ...metaParams(w)],
    },
  ];
}

/** ?1 revision id, ?2 memory id, ?3-?5 actor kind, id, name, ?6 transport, ?7 request id, ?8 now; then `extra` from ?9. */
function writeParams(memoryId: string, w: WriteMeta, extra: Literal[]): Literal[] {
  return [w.revisionId, memoryId, ...metaParams(w), ...extra];
}

/** The change, applied only when the write's revision row was recorded (see the module comment). */
function guardedUpdate(set: string, memoryId: string, w: WriteMeta, extra: Literal[] = []): Statement {
  return {
    sql: `UPDATE memories SET ${set}, updated_by_kind = ?3, updated_by_id = ?4, updated_by_name = ?5, updated_at = ?8
           WHERE id = ?2 AND EXISTS (SELECT 1 FROM memory_revisions WHERE id = ?1) RETURNING id`,
    params: writeParams(memoryId, w, extra),
  };
}

function revision(
  action: string,
  before: string,
  after: string,
  where: string,
  memoryId: string,
  w: WriteMeta,
  extra: Literal[] = [],
): Statement {
  return {
    sql: `INSERT INTO memory_revisions (${REVISION_COLUMNS})
          SELECT ?1, m.id, '${action}', ${before}, ${after}, ?3, ?4, ?5, ?6, ?7, ?8 FROM memories m
           WHERE m.id = ?2 AND ${where} RETURNING memory_id AS id`,
    params: writeParams(memoryId, w, extra),
  };
}

/**
 * The versions a write expects the memory to be at (`If-Match`, `expectedVersion`), as a JSON array, or null for
 * any. Placed after a statement's own values; `n` is its placeholder number.
 */
function versionGuard(n: number): string {
  return `(?${n} IS NULL OR ${VERSION_OF_M} IN (SELECT value FROM json_each(?${n})))`;
}

function expectedParam(expected: readonly number[] | null): Literal {
  return expected === null ? null : JSON.stringify(expected);
}

/** Changes the given fields of a live memory (at one of the `expected` versions, when given). */
export function updateMemoryStatements(
  memoryId: string,
  patch: MemoryPatch,
  w: WriteMeta,
  expected: readonly number[] | null = null,
): Statement[] {
  // ?9 title, ?10 content, ?11 = 1 when the table is set (to ?12, possibly null), ?13 expected versions.
  const values: Literal[] = [
    patch.title ?? null,
    patch.content ?? null,
    patch.table === undefined ? 0 : 1,
    patch.table ?? null,
    expectedParam(expected),
  ];
  const title = 'COALESCE(?9, title)';
  // iif, not CASE ... END: wrangler's statement splitter (admin CLI) reads END as the end of a compound statement.
  const table = 'iif(?11 = 1, ?12, table_name)';
  const content = 'COALESCE(?10, content)';
  return [
    revision(
      'update',
      STATE,
      `json_object('title', ${title}, 'table', ${table}, 'content', ${content}, 'deletedAt', NULL)`,
      `m.deleted_at IS NULL AND ${versionGuard(13)}`,
      memoryId,
      w,
      values,
    ),
    guardedUpdate(`title = ${title}, table_name = ${table}, content = ${content}`, memoryId, w, values.slice(0, 4)),
  ];
}

/** Deletes a live memory (kept, invisible, restorable), at one of the `expected` versions when given. */
export function deleteMemoryStatements(memoryId: string, w: WriteMeta, expected: readonly number[] | null = null): Statement[] {
  return [
    revision('delete', STATE, 'NULL', `m.deleted_at IS NULL AND ${versionGuard(9)}`, memoryId, w, [expectedParam(expected)]),
    guardedUpdate('deleted_at = ?8', memoryId, w),
  ];
}

/** Restores a deleted memory unless its owner is at the limit of live memories. */
export function restoreMemoryStatements(memoryId: string, w: WriteMeta): Statement[] {
  return [
    revision(
      'restore',
      STATE,
      `json_object('title', title, 'table', table_name, 'content', content, 'deletedAt', NULL)`,
      `m.deleted_at IS NOT NULL AND ${LIVE_OF_OWNER} < ?9`,
      memoryId,
      w,
      [MEMORY_LIMITS.perOwner],
    ),
    guardedUpdate('deleted_at = NULL', memoryId, w),
  ];
}

/**
 * The statement with its values written in as literals by `literal` (the seed's `sqlLiteral`), for tools that run
 * SQL text. Each `?N` is matched whole, so `?1` never eats the head of `?12`; the SQL has no `?` inside literals.
 */
export function inlineStatement(s: Statement, literal: (v: Literal) => string): string {
  return s.sql.replace(/\?(\d+)/g, (_, n: string) => {
    const i = Number(n) - 1;
    if (i < 0 || i >= s.params.length) throw new Error(`statement has no value for ?${n}`);
    return literal(s.params[i] ?? null);
  });
}

export const MEMORY_COLUMNS = `m.id, m.scope, m.org_id, m.brand_id, m.table_name, m.title, m.content, m.author_kind, m.author_id,
  m.author_name, m.updated_by_kind, m.updated_by_id, m.updated_by_name, m.created_at, m.updated_at, m.deleted_at,
  ${VERSION_OF_M} AS version`;

/**
 * The memory as the write with revision ?1 left it, read in the same batch (one transaction) as the write, so the
 * answer is the write's own result whatever lands after it; no row when the write did not apply.
 */
export function writtenMemoryStatement(memoryId: string, w: WriteMeta): Statement {
  return {
    sql:
      `SELECT ${MEMORY_COLUMNS} FROM memories m WHERE m.id = ?2 AND EXISTS (SELECT 1 FROM memory_revisions WHERE id = ?1 AND ` +
      `memory_id = ?2)`,
    params: [w.revisionId, memoryId],
  };
}

const ActorKindSchema = z.enum(['key', 'user', 'cli', 'seed']);
export const MemoryRowSchema = z.object({
  id: z.string(),
  scope: z.enum(['system', 'org', 'brand']),
  org_id: z.string().nullable(),
  brand_id: z.string().nullable(),
  table_name: z.string().nullable(),
  title: z.string(),
  content: z.string(),
  author_kind: ActorKindSchema,
  author_id: z.string().nullable(),
  author_name: z.string(),
  updated_by_kind: ActorKindSchema,
  updated_by_id: z.string().nullable(),
  updated_by_name: z.string(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
  deleted_at: z.number().int().nullable(),
  /** How many revisions the memory has (see the module comment). */
  version: z.number().int(),
});
export type MemoryRow = z.infer<typeof MemoryRowSchema>;

export function ownerOf(row: MemoryRow): MemoryOwner {
  return { scope: row.scope, orgId: row.org_id, brandId: row.brand_id };
}

/** The wire shape of a stored memory. */
export function toMemory(row: MemoryRow): Memory {
  return {
    memoryId: row.id,
    scope: row.scope,
    brandId: row.brand_id,
    table: row.table_name,
    title: row.title,
    content: row.content,
    author: { kind: row.author_kind, name: row.author_name },
    updatedBy: { kind: row.updated_by_kind, name: row.updated_by_name },
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
    version: row.version,
  };
}
