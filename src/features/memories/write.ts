import type { Env } from '../../env';
import { ApiError } from '../../errors';
import { newId } from '../../lib/ids';
import { MEMORY_LIMITS, writeRefusal, type MemoryOwner, type WriteReach } from './rules';
import {
  createMemoryStatements,
  deleteMemoryStatements,
  MemoryRowSchema,
  ownerOf,
  restoreMemoryStatements,
  updateMemoryStatements,
  VERSION_OF_M,
  writtenMemoryStatement,
  type Actor,
  type MemoryPatch,
  type MemoryRow,
  type Statement,
  type WriteMeta,
} from './store';

/**
 * Memory writes as every writer in the Worker makes them (the API operations for keys and OAuth connections, the
 * admin pages for administrators): check the writer's reach, run the recorded statements of `store.ts` as one D1
 * batch (one transaction), and turn a refused guard into the error the caller sees. The batch ends by reading the
 * memory as the write left it, so a write that applied is answered from itself: a delete or another write landing
 * right after it cannot turn its answer into a 404 or show someone else's change.
 */

/** Who writes, what they may write, and the record of this write. */
export interface Writer {
  actor: Actor;
  reach: WriteReach;
  /** rest | mcp | admin */
  transport: string;
  requestId: string | null;
  now: number;
}

export function writeForbidden(message: string): ApiError {
  return new ApiError('MEMORY_WRITE_FORBIDDEN', message, { details: { permission: 'memories:write' } });
}

export function memoryNotFound(memoryId: string): ApiError {
  return new ApiError('MEMORY_NOT_FOUND', `memory ${JSON.stringify(memoryId)} does not exist or is not visible to these credentials`, {
    details: { memoryId },
  });
}

function limitExceeded(owner: MemoryOwner): ApiError {
  const who = owner.scope === 'brand' ? `brand ${owner.brandId}` : owner.scope === 'org' ? `organization ${owner.orgId}` : 'system';
  return new ApiError(
    'MEMORY_LIMIT_EXCEEDED',
    `${who} already has ${MEMORY_LIMITS.perOwner} memories, the most it can have; update or delete one first`,
    {
      details: { limit: MEMORY_LIMITS.perOwner, scope: owner.scope },
    },
  );
}

function authorize(w: Writer, owner: MemoryOwner): WriteMeta {
  const refusal = writeRefusal(w.reach, owner);
  if (refusal !== null) throw writeForbidden(refusal);
  return { revisionId: newId('mrev'), actor: w.actor, transport: w.transport, requestId: w.requestId, now: w.now };
}

/**
 * Runs the write's statements and then the read of its result in one batch; the memory as written, or null when a
 * guard refused the write (each statement returns the id it touched, and the read finds nothing).
 */
async function apply(env: Env, statements: Statement[], read: Statement): Promise<MemoryRow | null> {
  const results = await env.DB.batch([...statements, read].map((s) => env.DB.prepare(s.sql).bind(...s.params)));
  const written = results[results.length - 1]?.results ?? [];
  const applied = results.slice(0, -1).every((r) => (r.results?.length ?? 0) > 0);
  if (!applied || written.length !== 1) return null;
  return MemoryRowSchema.parse(written[0]);
}

/** 412: the memory is not at a version the writer expected (someone else wrote it since the writer read it). */
export function preconditionFailed(memoryId: string, expected: readonly number[], current: number): ApiError {
  return new ApiError(
    'PRECONDITION_FAILED',
    `memory ${memoryId} is at version ${current}, not ${expected.join(' or ') || 'the one expected'}; someone changed it since you ` +
      `read it: read it again and reapply your change`,
    { details: { memoryId, currentVersion: current, expectedVersions: expected } },
  );
}

/** Why a guarded update or delete of a live memory did not apply: it was deleted meanwhile, or moved past `expected`. */
async function refusedWrite(env: Env, memoryId: string, expected: readonly number[] | null): Promise<ApiError> {
  const now = await env.DB.prepare(`SELECT m.deleted_at, ${VERSION_OF_M} AS version FROM memories m WHERE m.id = ?`)
    .bind(memoryId)
    .first<{ deleted_at: number | null; version: number }>();
  if (now === null || now.deleted_at !== null || expected === null) return memoryNotFound(memoryId);
  return preconditionFailed(memoryId, expected, now.version);
}

/** Creates a memory for `owner`; returns it as created. 403 outside the writer's reach, 409 at the owner's limit. */
export async function createMemoryAs(
  env: Env,
  w: Writer,
  owner: MemoryOwner,
  fields: { table: string | null; title: string; content: string },
): Promise<MemoryRow> {
  const meta = authorize(w, owner);
  const id = newId('mem');
  const row = await apply(env, createMemoryStatements({ id, ...owner, ...fields }, meta), writtenMemoryStatement(id, meta));
  if (row === null) throw limitExceeded(owner);
  return row;
}

/**
 * Changes a live memory; returns it as changed. `expected`: the versions the writer read (If-Match), null for any.
 * 403 outside the writer's reach; 404 when it was deleted meanwhile; 412 when it moved past `expected`.
 */
export async function updateMemoryAs(
  env: Env,
  w: Writer,
  row: MemoryRow,
  patch: MemoryPatch,
  expected: readonly number[] | null = null,
): Promise<MemoryRow> {
  const meta = authorize(w, ownerOf(row));
  const written = await apply(env, updateMemoryStatements(row.id, patch, meta, expected), writtenMemoryStatement(row.id, meta));
  if (written === null) throw await refusedWrite(env, row.id, expected);
  return written;
}

/**
 * Deletes a live memory (kept, restorable); returns it as deleted. 403 outside the writer's reach; 404 when already
 * deleted; 412 when it moved past `expected`.
 */
export async function deleteMemoryAs(env: Env, w: Writer, row: MemoryRow, expected: readonly number[] | null = null): Promise<MemoryRow> {
  const meta = authorize(w, ownerOf(row));
  const written = await apply(env, deleteMemoryStatements(row.id, meta, expected), writtenMemoryStatement(row.id, meta));
  if (written === null) throw await refusedWrite(env, row.id, expected);
  return written;
}

/** Restores a deleted memory. 403 outside the writer's reach; 409 when it is live already or its owner is at the limit. */
export async function restoreMemoryAs(env: Env, w: Writer, row: MemoryRow): Promise<void> {
  const meta = authorize(w, ownerOf(row));
  if ((await apply(env, restoreMemoryStatements(row.id, meta), writtenMemoryStatement(row.id, meta))) === null) {
    if (row.deleted_at === null) throw new ApiError('VALIDATION', `memory ${row.id} is not deleted`);
    throw limitExceeded(ownerOf(row));
  }
}
