import { z } from 'zod';
import type { AdminReach } from '../../auth/oauth-principal';
import type { Env } from '../../env';
import { ApiError } from '../../errors';
import { ContentSchema, TableNameSchema, TitleSchema } from './fields';
import { memoryAppliesTo, writeRefusal, type MemoryOwner } from './rules';
import { MEMORY_COLUMNS, MemoryRowSchema, ownerOf, type MemoryRow } from './store';
import { createMemoryAs, deleteMemoryAs, memoryNotFound, restoreMemoryAs, updateMemoryAs, type Writer } from './write';

/**
 * Memories as an administrator manages them on the admin pages: every memory reaching a brand they administer
 * (deleted ones too, to restore them), grouped by table, with who wrote what; and the writes, made as that user
 * through the same recorded statements as the API (transport `admin`).
 */

/** One recorded write, as the page shows it. */
export interface MemoryRevisionView {
  action: 'create' | 'update' | 'delete' | 'restore';
  actorKind: string;
  actorName: string;
  transport: string;
  at: number;
  /** Title and content before the write (null for a create). */
  before: { title: string; content: string; table: string | null } | null;
}

export interface ManagedMemory {
  id: string;
  row: MemoryRow;
  /** "All brands", "Organization <name>", or the brand's name. */
  ownerLabel: string;
  /** Whether this user may change it (false for `system` memories and those of orgs they hold only in part). */
  writable: boolean;
  revisions: MemoryRevisionView[];
}

export interface MemoryTableGroup {
  /** null = general context (no table). */
  table: string | null;
  memories: ManagedMemory[];
}

/** What an administrator writes as, and may write: their whole orgs and every brand they reach. */
export function adminWriter(reach: AdminReach, requestId: string | null, now: number): Writer {
  return {
    actor: { kind: 'user', id: reach.userId, name: reach.name ?? reach.email },
    reach: { orgIds: reach.orgIds, brandIds: reach.brands.map((b) => b.id) },
    transport: 'admin',
    requestId,
    now,
  };
}

function reachesAdmin(reach: AdminReach, owner: MemoryOwner): boolean {
  return reach.brands.some((b) => memoryAppliesTo(owner, b));
}

const StateSchema = z.object({ title: z.string(), content: z.string(), table: z.string().nullable() });
const RevisionRowSchema = z.object({
  memory_id: z.string(),
  action: z.enum(['create', 'update', 'delete', 'restore']),
  before_json: z.string().nullable(),
  actor_kind: z.string(),
  actor_name: z.string(),
  transport: z.string(),
  created_at: z.number().int(),
});

/** Most memories one page lists (owners hold at most 200 live each; deleted ones add up over time). */
const PAGE_MAX = 1000;

/** What the memories list shows: live or deleted ones, optionally only those reaching one brand or holding some words. */
export interface MemoryListFilter {
  deleted: boolean;
  /** Only memories that reach this brand (system ones, its organization's, its own); one of the user's brands. */
  brandId?: string;
  /** Only memories whose title, table or content holds this text (any case). */
  text?: string;
}

/**
 * The memories reaching the user's brands (and the filter), grouped by table (general first, then by name), each
 * with its history. A brand outside the user's reach matches nothing.
 */
export async function listManagedMemories(env: Env, reach: AdminReach, opts: MemoryListFilter): Promise<MemoryTableGroup[]> {
  const orgIds = [...new Set(reach.brands.map((b) => b.orgId))];
  const brandIds = reach.brands.map((b) => b.id);
  const brand = opts.brandId === undefined ? null : reach.brands.find((b) => b.id === opts.brandId);
  if (brand === undefined) return [];
  const text = opts.text?.trim() ? opts.text.trim().toLowerCase() : null;
  // ?1 org ids, ?2 brand ids, ?3 deleted, ?4/?5 the brand filter (id, its org), ?6 the text filter.
  const where = `(m.deleted_at IS NULL) <> ?3
    AND (m.scope = 'system' OR m.org_id IN (SELECT value FROM json_each(?1)) OR m.brand_id IN (SELECT value FROM json_each(?2)))
    AND (?4 IS NULL OR m.scope = 'system' OR m.org_id = ?5 OR m.brand_id = ?4)
    AND (?6 IS NULL OR instr(lower(m.title), ?6) > 0 OR instr(lower(m.content), ?6) > 0 OR instr(lower(COALESCE(m.table_name, '')), ?6) > 0)`;
  const params = [JSON.stringify(orgIds), JSON.stringify(brandIds), opts.deleted ? 1 : 0, brand?.id ?? null, brand?.orgId ?? null, text];
  const [memories, revisions] = await env.DB.batch([
    env.DB.prepare(
      `SELECT ${MEMORY_COLUMNS} FROM memories m WHERE ${where}
        ORDER BY m.table_name IS NOT NULL, m.table_name, m.scope, m.updated_at DESC, m.id LIMIT ${PAGE_MAX}`,
    ).bind(...params),
    env.DB.prepare(
      `SELECT r.memory_id, r.action, r.before_json, r.actor_kind, r.actor_name, r.transport, r.created_at FROM memory_revisions r
        WHERE r.memory_id IN (SELECT m.id FROM memories m WHERE ${where})
        ORDER BY r.created_at DESC, r.rowid DESC`,
    ).bind(...params),
  ]);
  const history = new Map<string, MemoryRevisionView[]>();
  for (const r of z.array(RevisionRowSchema).parse(revisions?.results ?? [])) {
    const list = history.get(r.memory_id) ?? [];
    list.push({
      action: r.action,
      actorKind: r.actor_kind,
      actorName: r.actor_name,
      transport: r.transport,
      at: r.created_at,
      before: r.before_json === null ? null : StateSchema.parse(JSON.parse(r.before_json)),
    });
    history.set(r.memory_id, list);
  }
  const { results: orgRows } = await env.DB.prepare('SELECT id, name FROM organizations WHERE id IN (SELECT value FROM json_each(?))')
    .bind(JSON.stringify(orgIds))
    .all<{ id: string; name: string }>();
  const orgName = new Map(orgRows.map((o) => [o.id, o.name]));
  const brandName = new Map(reach.brands.map((b) => [b.id, b.name ?? b.id]));
  const groups: MemoryTableGroup[] = [];
  for (const row of z.array(MemoryRowSchema).parse(memories?.results ?? [])) {
    const owner = ownerOf(row);
    if (!reachesAdmin(reach, owner)) continue;
    const ownerLabel =
      owner.scope === 'system'
        ? 'All brands (system)'
        : owner.scope === 'org'
          ? `Organization ${orgName.get(owner.orgId ?? '') ?? owner.orgId}`
          : `Brand ${brandName.get(owner.brandId ?? '') ?? owner.brandId}`;
    const m: ManagedMemory = {
      id: row.id,
      row,
      ownerLabel,
      writable: writeRefusal(adminWriter(reach, null, 0).reach, owner) === null,
      revisions: history.get(row.id) ?? [],
    };
    const last = groups[groups.length - 1];
    if (last && last.table === row.table_name) last.memories.push(m);
    else groups.push({ table: row.table_name, memories: [m] });
  }
  return groups;
}

/** Where a new memory goes: `org:<orgId>` or `brand:<brandId>`, among what the user may write. */
export interface MemoryOwnerChoice {
  value: string;
  label: string;
}

export async function memoryOwnerChoices(env: Env, reach: AdminReach): Promise<MemoryOwnerChoice[]> {
  const { results } = await env.DB.prepare('SELECT id, name FROM organizations WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id')
    .bind(JSON.stringify(reach.orgIds))
    .all<{ id: string; name: string }>();
  return [
    ...results.map((o) => ({ value: `org:${o.id}`, label: `${o.name}: every brand (organization)` })),
    ...reach.brands.map((b) => ({ value: `brand:${b.id}`, label: `${b.name ?? b.id} (brand)` })),
  ];
}

const emptyToNull = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? null : v);

/** The edit form: title, content, table (empty = general). The same field rules as the API. */
export const MemoryFormSchema = z.object({
  title: TitleSchema,
  content: ContentSchema,
  table: z.preprocess(emptyToNull, TableNameSchema.nullable()),
});

/** The create form: the edit form plus where it goes. */
export const NewMemoryFormSchema = MemoryFormSchema.extend({
  owner: z.string().regex(/^(org|brand):.+$/, { error: 'choose which brands the memory is for' }),
});

function parseOwner(value: string): MemoryOwner {
  const at = value.indexOf(':');
  const id = value.slice(at + 1);
  return value.slice(0, at) === 'org' ? { scope: 'org', orgId: id, brandId: null } : { scope: 'brand', orgId: null, brandId: id };
}

export async function createManagedMemory(env: Env, w: Writer, form: z.infer<typeof NewMemoryFormSchema>): Promise<string> {
  return (await createMemoryAs(env, w, parseOwner(form.owner), { table: form.table, title: form.title, content: form.content })).id;
}

/** A memory reaching the user's brands, deleted or not; 404 otherwise. */
async function findManaged(env: Env, reach: AdminReach, memoryId: string): Promise<MemoryRow> {
  const raw = await env.DB.prepare(`SELECT ${MEMORY_COLUMNS} FROM memories m WHERE m.id = ?`).bind(memoryId).first();
  const row = raw === null ? null : MemoryRowSchema.parse(raw);
  if (row === null || !reachesAdmin(reach, ownerOf(row))) throw memoryNotFound(memoryId);
  return row;
}

export async function updateManagedMemory(
  env: Env,
  reach: AdminReach,
  w: Writer,
  memoryId: string,
  form: z.infer<typeof MemoryFormSchema>,
): Promise<void> {
  const row = await findManaged(env, reach, memoryId);
  if (row.deleted_at !== null) throw new ApiError('VALIDATION', 'restore the memory before editing it');
  await updateMemoryAs(env, w, row, form);
}

export async function deleteManagedMemory(env: Env, reach: AdminReach, w: Writer, memoryId: string): Promise<void> {
  await deleteMemoryAs(env, w, await findManaged(env, reach, memoryId));
}

export async function restoreManagedMemory(env: Env, reach: AdminReach, w: Writer, memoryId: string): Promise<void> {
  await restoreMemoryAs(env, w, await findManaged(env, reach, memoryId));
}
