/**
 * Entity tags of versioned resources (memories): the version number, quoted, as a strong validator (RFC 9110
 * §8.8.3). `If-Match` is compared strongly (§13.1.1), so a weak tag never matches.
 */

export function versionETag(version: number): string {
  return `"${version}"`;
}

/**
 * The versions an `If-Match` header accepts: null when the header is absent or `*` (any current version), else the
 * versions its strong tags name; tags that are not a version of ours (weak, other text) match nothing, so a list of
 * only such tags is an empty list and the write is refused with 412.
 */
export function ifMatchVersions(header: string | undefined | null): number[] | null {
  if (header === undefined || header === null) return null;
  const trimmed = header.trim();
  if (trimmed === '*') return null;
  const versions: number[] = [];
  for (const tag of trimmed.split(',')) {
    const m = /^"([1-9][0-9]{0,14})"$/.exec(tag.trim());
    if (m?.[1] !== undefined) versions.push(Number(m[1]));
  }
  return versions;
}
