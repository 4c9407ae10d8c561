import { z } from 'zod';

/**
 * The library's grant user id is ours, escaped: it must not contain `:` (the separator of its token format), so a
 * D1 user id is stored URI-encoded and decoded back wherever a grant names its user.
 */
export function encodeGrantUserId(userId: string): string {
  return encodeURIComponent(userId);
}

export function decodeGrantUserId(grantUserId: string): string {
  return decodeURIComponent(grantUserId);
}

/** The grant id inside one of the library's tokens (`<userId>:<grantId>:<secret>`), or null for anything else. */
export function grantIdOfToken(token: string): string | null {
  const parts = token.split(':');
  return parts.length === 3 && parts[1] ? parts[1] : null;
}

/** What the consent page stores on a grant (storage-visible, never secret). */
export const GrantMetadataSchema = z.object({
  clientName: z.string().max(200).optional(),
  redirectHost: z.string().max(300).optional(),
  /** The consent page's choice, also in the grant's props (which decide); here so the Assistants page can show it. */
  writes: z.object({ memories: z.boolean(), reports: z.boolean() }).optional(),
});
export type GrantMetadata = z.infer<typeof GrantMetadataSchema>;
