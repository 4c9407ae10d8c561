import type { Env } from '../env';
import { newId } from '../lib/ids';
import type { Actor, Statement, WriteMeta } from './store';

/**
 * Runs one memory write (the statements of `src/memories/store.ts`) as a D1 batch, which is one transaction.
 * True when every statement applied (each returns the id it touched); false when the guard refused it (the memory
 * was not in the expected state, or its owner is at the limit), in which case nothing changed.
 */
export async function applyMemoryWrite(env: Env, statements: Statement[]): Promise<boolean> {
  const results = await env.DB.batch(statements.map((s) => env.DB.prepare(s.sql).bind(...s.params)));
  return results.every((r) => (r.results?.length ?? 0) > 0);
}

/** The record of one write made now by `actor` through `transport`. */
export function writeMeta(actor: Actor, transport: string, requestId: string | null, now: number): WriteMeta {
  return { revisionId: newId('mrev'), actor, transport, requestId, now };
}
