import { reportAppliesTo } from '../../catalog/snapshot';
import { MAX_TABLE_NAME_CHARS } from '../../catalog/table-name';

/**
 * The rules of memories that every writer shares (REST and MCP operations, the admin pages, the admin CLI, the demo
 * seed): limits, who sees a memory, who may write it. Pure: no I/O.
 */

export const MEMORY_LIMITS = {
  /** Markdown content, in bytes of UTF-8 (8 KiB). */
  contentBytes: 8192,
  /** Title, in characters. */
  titleChars: 200,
  /** Live (not deleted) memories per owner: per brand for `brand` memories, per org for `org`, in all for `system`. */
  perOwner: 200,
  /** Table name, in characters. */
  tableChars: MAX_TABLE_NAME_CHARS,
  /** Text search `q`, in characters. */
  queryChars: 200,
} as const;

/** Page size of listMemories, as the reports list: 1 to 200, default 50. */
export const MEMORIES_PAGE = { default: 50, min: 1, max: 200 } as const;

export type MemoryScope = 'system' | 'org' | 'brand';

/** Where a memory lives: its scope and owner. */
export interface MemoryOwner {
  scope: MemoryScope;
  orgId: string | null;
  brandId: string | null;
}

/** Bytes of `text` in UTF-8 (the content limit is in bytes, as stored). */
export function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}

/**
 * Whether a memory reaches a brand: the reports' rule (`system` every brand, `org` the brands of its org, `brand`
 * its own brand), stated once in `reportAppliesTo`.
 */
export function memoryAppliesTo(m: MemoryOwner, brand: { id: string; orgId: string }): boolean {
  return reportAppliesTo({ type: m.scope, orgId: m.orgId, brandId: m.brandId }, brand);
}

/**
 * What a writer may write: `org` memories of the orgs it holds as a whole, `brand` memories of its brands. An org
 * API key holds its org and its brands; a brand key its brand; an administrator (admin pages, OAuth connection)
 * the orgs and brands of their memberships. Nobody but the admin CLI writes `system` memories.
 */
export interface WriteReach {
  orgIds: readonly string[];
  brandIds: readonly string[];
}

/** Why `owner` is outside `reach`, or null when the write is allowed. */
export function writeRefusal(reach: WriteReach, owner: MemoryOwner): string | null {
  if (owner.scope === 'system') return 'system memories are written only with the admin CLI';
  if (owner.scope === 'org') {
    return owner.orgId !== null && reach.orgIds.includes(owner.orgId)
      ? null
      : 'organization memories are written only with organization-wide credentials of that organization';
  }
  return owner.brandId !== null && reach.brandIds.includes(owner.brandId)
    ? null
    : `these credentials cannot write memories of brand ${JSON.stringify(owner.brandId)}`;
}
