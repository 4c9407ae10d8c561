import type { Env } from '../../env';
import { ApiError } from '../../errors';
import { newId } from '../../lib/ids';
import { MEMORY_LIMITS, writeRefusal, type MemoryOwner, type WriteReach } from './rules';
import {
  createMemoryStatements,
  deleteMemoryStatements,
  ownerOf,
  restoreMemoryStatements,
  updateMemoryStatements,
  type Actor,
  type MemoryPatch,
  type MemoryRow,
  type Statement,
  type WriteMeta,
} from './store';

/**
 * Memory writes as every writer in the Worker makes them (the API operations for keys and OAuth connections, the
 * admin pages for administrators): check the writer's reach, run the recorded statements of `store.ts` as one D1
 * batch (one transaction), and turn a refused guard into the error the caller sees.
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
  return new ApiError('MEMORY_LIMIT_EXCEEDED', `${who} already has ${MEMORY_LIMITS.perOwner} memories, the most it can have; update or delete one first`, {
    details: { limit: MEMORY_LIMITS.perOwner, scope: owner.scope },
  });
}

function authorize(w: Writer, owner: MemoryOwner): WriteMeta {
  const refusal = writeRefusal(w.reach, owner);
  if (refusal !== null) throw writeForbidden(refusal);
  return { revisionId: newId('mrev'), actor: w.actor, transport: w.transport, requestId: w.requestId, now: w.now };
}

/** True when every statement applied (each returns the id it touched); false when the guard refused the write. */
async function apply(env: Env, statements: Statement[]): Promise<boolean> {
  const results = await env.DB.batch(statements.map((s) => env.DB.prepare(s.sql).bind(...s.params)));
  return results.every((r) => (r.results?.length ?? 0) > 0);
}

/** Creates a memory for `owner`; returns its id. 403 outside the writer's reach, 409 at the owner's limit. */
export async function createMemoryAs(
  env: Env,
  w: Writer,
  owner: MemoryOwner,
  fields: { table: string | null; title: string; content: string },
): Promise<string> {
  const meta = authorize(w, owner);
  const id = newId('mem');
  if (!(await apply(env, createMemoryStatements({ id, ...owner, ...fields }, meta)))) throw limitExceeded(owner);
  return id;
}

/** Changes a live memory. 403 outside the writer's reach; 404 when it was deleted meanwhile. */
export async function updateMemoryAs(env: Env, w: Writer, row: MemoryRow, patch: MemoryPatch): Promise<void> {
  const meta = authorize(w, ownerOf(row));
  if (!(await apply(env, updateMemoryStatements(row.id, patch, meta)))) throw memoryNotFound(row.id);
}

/** Deletes a live memory (kept, restorable). 403 outside the writer's reach; 404 when already deleted. */
export async function deleteMemoryAs(env: Env, w: Writer, row: MemoryRow): Promise<void> {
  const meta = authorize(w, ownerOf(row));
  if (!(await apply(env, deleteMemoryStatements(row.id, meta)))) throw memoryNotFound(row.id);
}

/** Restores a deleted memory. 403 outside the writer's reach; 409 when it is live already or its owner is at the limit. */
export async function restoreMemoryAs(env: Env, w: Writer, row: MemoryRow): Promise<void> {
  const meta = authorize(w, ownerOf(row));
  if (!(await apply(env, restoreMemoryStatements(row.id, meta)))) {
    if (row.deleted_at === null) throw new ApiError('VALIDATION', `memory ${row.id} is not deleted`);
    throw limitExceeded(ownerOf(row));
  }
}
