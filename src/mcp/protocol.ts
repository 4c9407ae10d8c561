/**
 * The MCP protocol revisions this endpoint serves, in one place: the handler routes on them, refuses the rest
 * with this list, and the docs name the same four.
 */

/** 2026-07-28: stateless, every request carries its own `_meta` envelope (no `initialize`). */
export const MODERN_PROTOCOL_VERSIONS = ['2026-07-28'] as const;

/** The 2025 era: clients `initialize` first, then send `MCP-Protocol-Version` on every request. */
export const LEGACY_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;

export const SUPPORTED_PROTOCOL_VERSIONS: string[] = [...MODERN_PROTOCOL_VERSIONS, ...LEGACY_PROTOCOL_VERSIONS];

/**
 * JSON-RPC batches exist only in 2025-03-26: 2025-06-18 removed them and 2026-07-28 keeps them out. A 2025-era
 * request without `MCP-Protocol-Version` is 2025-03-26 by the transport spec's backwards-compatibility rule.
 */
export function batchesAllowed(protocolVersionHeader: string | null): boolean {
  return (protocolVersionHeader ?? '2025-03-26') === '2025-03-26';
}
