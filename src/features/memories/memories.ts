import { z } from 'zod';
import { usageKey, type Principal } from '../../auth/principal';
import { isAdministrator, loadAdminReach } from '../../auth/oauth-principal';
import { catalogSnapshot } from '../../catalog/snapshot';
import { requireSecret } from '../../env';
import { ApiError } from '../../errors';
import { keysetPage, openCursor } from '../../http/cursor';
import { hasMemoryWrite } from './permissions';
import { MEMORIES_PAGE, memoryAppliesTo, type MemoryOwner } from './rules';
import { MEMORY_COLUMNS, MemoryRowSchema, ownerOf, toMemory, type MemoryRow } from './store';
import { createMemoryAs, deleteMemoryAs, memoryNotFound, updateMemoryAs, writeForbidden, type Writer } from './write';
import type { CreateMemoryInput, ListMemoriesInput, Memory, UpdateMemoryInput } from './memories.schemas';
import type { OpContext } from '../../context';
import { listingBrands, resolveBrand } from '../../auth/scope';

/**
 * The five Memories operations, shared by REST and MCP (docs/memories.md). Reading follows the reports' visibility
 * rule; writing needs the right to write (API keys created with `memories:write`, administrators through OAuth)
 * and stays inside the writer's scope. Every write goes through `src/features/memories/store.ts`, which records it.
 */

/** Keyset position in the listing's total order: scope rank, owner (org or brand id, '' for system), created_at, id. */
const PositionSchema = z.tuple([z.number().int(), z.string(), z.number().int(), z.string()]);
type Position = z.infer<typeof PositionSchema>;
const START: Position = [-1, '', 0, ''];

const RANK = `CASE m.scope WHEN 'system' THEN 0 WHEN 'org' THEN 1 ELSE 2 END`;
const OWNER = `COALESCE(m.brand_id, m.org_id, '')`;
const ListedRowSchema = MemoryRowSchema.extend({ rank: z.number().int(), owner: z.string() });

/**
 * Live memories reaching any of `brandIds`: the reports' rule as a set (`system`; `org` of the brands' orgs; `brand`
 * of the brands), the same rule as `memoryAppliesTo`. Filters are exact table, text contained in title or content,
 * scope. Ordered by the position, after `after`, at most `take`.
 */
const LIST_SQL = `SELECT ${MEMORY_COLUMNS}, ${RANK} AS rank, ${OWNER} AS owner FROM memories m
  WHERE m.deleted_at IS NULL
    AND (m.scope = 'system'
      OR (m.scope = 'org' AND m.org_id IN (SELECT value FROM json_each(?1)))
      OR (m.scope = 'brand' AND m.brand_id IN (SELECT value FROM json_each(?2))))
    AND (?3 IS NULL OR m.table_name = ?3)
    AND (?4 IS NULL OR instr(lower(m.title), lower(?4)) > 0 OR instr(lower(m.content), lower(?4)) > 0)
    AND (?5 IS NULL OR m.scope = ?5)
    AND (${RANK}, ${OWNER}, m.created_at, m.id) > (?6, ?7, ?8, ?9)
  ORDER BY ${RANK}, ${OWNER}, m.created_at, m.id
  LIMIT ?10`;

/** listMemories: the memories the principal can see (each once), filtered and paged like listReports. */
export async function listMemories(
  ctx: OpContext,
  input: ListMemoriesInput,
): Promise<{ memories: Memory[]; nextCursor: string | null; hasMore: boolean }> {
  // `limit` is within MEMORIES_PAGE: the REST route and the MCP tool validate it with the shared field schemas.
  const limit = input.limit ?? MEMORIES_PAGE.default;
  const { brand, brandIds } = listingBrands(ctx.principal, input.brandId);
  const table = input.table ?? null;
  const q = input.q ?? null;
  const scope = input.scope ?? null;

  const secret = requireSecret(ctx.env, 'CURSOR_SECRET');
  const binding = { principal: usageKey(ctx.principal), filters: { brandId: brand, table, q, scope, list: 'memories' } };
  const after = input.cursor === undefined ? START : await openCursor(secret, input.cursor, binding, ctx.now, PositionSchema);
  if (brandIds.length === 0) return { memories: [], nextCursor: null, hasMore: false };

  const snapshot = await catalogSnapshot(ctx.env, ctx.now);
  const orgIds = [...new Set(brandIds.flatMap((b) => snapshot.brands.get(b)?.orgId ?? []))];
  const { results } = await ctx.env.DB.prepare(LIST_SQL)
    .bind(JSON.stringify(orgIds), JSON.stringify(brandIds), table, q, scope, ...after, limit + 1)
    .all();
  const rows = z.array(ListedRowSchema).parse(results);
  const { page, nextCursor } = await keysetPage(rows, limit, (r) => [r.rank, r.owner, r.created_at, r.id], {
    secret,
    binding,
    now: ctx.now,
  });
  return { memories: page.map(toMemory), nextCursor, hasMore: nextCursor !== null };
}

/** Memories reaching one brand about one table, or general (no table): what a reader of that table should know. */
const FOR_TABLE_SQL = `SELECT ${MEMORY_COLUMNS} FROM memories m
  WHERE m.deleted_at IS NULL
    AND (m.scope = 'system' OR (m.scope = 'org' AND m.org_id IS ?1) OR (m.scope = 'brand' AND m.brand_id = ?2))
    AND (m.table_name = ?3 OR m.table_name IS NULL)
  ORDER BY ${RANK}, m.table_name IS NULL, m.created_at, m.id
  LIMIT ?4`;

/**
 * The memories that apply to `table` of `brandId` (already resolved for the principal): system, the brand's
 * organization's and the brand's own, about that table or general, each once; table-specific ones first within a
 * scope. At most `limit`; `more` says some were left out.
 */
export async function memoriesForTable(
  ctx: OpContext,
  brandId: string,
  table: string,
  limit: number,
): Promise<{ memories: Memory[]; more: boolean }> {
  const orgId = (await catalogSnapshot(ctx.env, ctx.now)).brands.get(brandId)?.orgId ?? null;
  const { results } = await ctx.env.DB.prepare(FOR_TABLE_SQL)
    .bind(orgId, brandId, table, limit + 1)
    .all();
  const rows = z.array(MemoryRowSchema).parse(results);
  return { memories: rows.slice(0, limit).map(toMemory), more: rows.length > limit };
}

/** Whether a memory reaches any brand of the principal. */
async function visibleToPrincipal(ctx: OpContext, owner: MemoryOwner): Promise<boolean> {
  const snapshot = await catalogSnapshot(ctx.env, ctx.now);
  return ctx.principal.brandIds.some((id) => {
    const b = snapshot.brands.get(id);
    return b !== undefined && memoryAppliesTo(owner, b);
  });
}

/** The live memory, or 404 MEMORY_NOT_FOUND when it is missing, deleted or reaches none of the principal's brands. */
async function findVisibleMemory(ctx: OpContext, memoryId: string): Promise<MemoryRow> {
  const raw = await ctx.env.DB.prepare(`SELECT ${MEMORY_COLUMNS} FROM memories m WHERE m.id = ? AND m.deleted_at IS NULL`)
    .bind(memoryId)
    .first();
  if (raw === null) throw memoryNotFound(memoryId);
  const row = MemoryRowSchema.parse(raw);
  if (!(await visibleToPrincipal(ctx, ownerOf(row)))) throw memoryNotFound(memoryId);
  return row;
}

/** getMemory: one visible memory. */
export async function getMemory(ctx: OpContext, input: { memoryId: string }): Promise<Memory> {
  return toMemory(await findVisibleMemory(ctx, input.memoryId));
}

/**
 * Who the principal writes as and what it may write, or 403 MEMORY_WRITE_FORBIDDEN for a key without the
 * `memories:write` permission (read on every write, so granting or withdrawing it applies at once). An OAuth
 * connection writes only when its administrator allowed memories at approval (the consent page's choice); it acts
 * within that administrator's memberships (re-read, as the connection's own access is) and is recorded as
 * "<assistant> for <user>", never as the person alone.
 */
async function principalWriter(ctx: OpContext): Promise<Writer> {
  const p: Principal = ctx.principal;
  const record = { transport: ctx.transport, requestId: ctx.requestId, now: ctx.now };
  if (p.kind === 'key') {
    if (!(await hasMemoryWrite(ctx.env, p.id))) {
      const scope = p.scope === 'org' && p.orgId !== null ? `--org ${p.orgId}` : `--brand ${p.brandIds[0] ?? '<brandId>'}`;
      throw writeForbidden(
        'this API key can read memories but not write them. An administrator can create a key that may write them, in the ' +
          `admin pages (API keys, memories: write) or with: npm run admin -- key create ${scope} --name "<key name>" --memories write`,
      );
    }
    const reach = { orgIds: p.scope === 'org' && p.orgId !== null ? [p.orgId] : [], brandIds: p.brandIds };
    return { actor: { kind: 'key', id: p.id, name: p.label }, reach, ...record };
  }
  if (p.writes?.memories !== true) {
    throw writeForbidden(
      'this assistant connection was approved without saving memories. An administrator can disconnect it (Connected ' +
        'assistants) and connect it again with "Save memories" ticked on the approval page',
    );
  }
  const reach = p.userId === undefined ? null : await loadAdminReach(ctx.env, p.userId);
  if (!isAdministrator(reach)) throw writeForbidden('only administrators write memories through an OAuth connection');
  return {
    actor: { kind: 'user', id: reach.userId, name: p.actorName ?? reach.name ?? reach.email },
    reach: { orgIds: reach.orgIds, brandIds: reach.brands.map((b) => b.id).filter((b) => p.brandIds.includes(b)) },
    ...record,
  };
}

/** The owner a create request names, or the error that refuses it (before any write right is looked at). */
function requestedOwner(ctx: OpContext, input: CreateMemoryInput): MemoryOwner {
  const scope = input.scope ?? 'brand';
  if (scope === 'system') throw writeForbidden('system memories are written only with the admin CLI');
  if (scope === 'org') {
    if (input.brandId !== undefined) {
      throw new ApiError('VALIDATION', 'invalid request body brandId: organization memories have no brandId; omit it, or use scope brand', {
        details: { in: 'body', issues: [{ path: 'brandId', message: 'not allowed with scope org' }] },
      });
    }
    if (ctx.principal.orgId === null)
      throw writeForbidden('these credentials span several organizations; write organization memories in the admin pages');
    return { scope, orgId: ctx.principal.orgId, brandId: null };
  }
  return { scope, orgId: null, brandId: resolveBrand(ctx.principal, input.brandId, { required: true, transport: ctx.transport }) };
}

/** createMemory: a new `org` or `brand` memory inside the writer's scope (201), answered from the write itself. */
export async function createMemory(ctx: OpContext, input: CreateMemoryInput): Promise<Memory> {
  const owner = requestedOwner(ctx, input);
  const row = await createMemoryAs(ctx.env, await principalWriter(ctx), owner, {
    table: input.table ?? null,
    title: input.title,
    content: input.content,
  });
  return toMemory(row);
}

/**
 * The versions a conditional write expects: REST's `If-Match` (already parsed) or MCP's `expectedVersion`; null
 * for an unconditional write.
 */
export interface WriteCondition {
  expectedVersions?: readonly number[] | null;
}

/**
 * updateMemory: changes title, content or table of a visible memory the writer may write; answered from the write
 * itself (a delete landing right after cannot turn an applied update into a 404). With `expectedVersions`, 412
 * PRECONDITION_FAILED unless the memory is still at one of them when the write applies.
 */
export async function updateMemory(ctx: OpContext, input: { memoryId: string } & UpdateMemoryInput & WriteCondition): Promise<Memory> {
  const { memoryId, expectedVersions, ...patch } = input;
  // Visibility first: an id the caller cannot see is 404 whatever its rights.
  const row = await findVisibleMemory(ctx, memoryId);
  return toMemory(await updateMemoryAs(ctx.env, await principalWriter(ctx), row, patch, expectedVersions ?? null));
}

/** deleteMemory: deletes a visible memory the writer may write; it stays restorable from the admin pages. */
export async function deleteMemory(
  ctx: OpContext,
  input: { memoryId: string } & WriteCondition,
): Promise<{ memoryId: string; deleted: true; version: number }> {
  const row = await findVisibleMemory(ctx, input.memoryId);
  const deleted = await deleteMemoryAs(ctx.env, await principalWriter(ctx), row, input.expectedVersions ?? null);
  return { memoryId: input.memoryId, deleted: true, version: deleted.version };
}
