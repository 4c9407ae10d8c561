/**
 * BigQuery job labels (cost attribution: key, brand, operation, stored query). BigQuery rejects the whole job
 * when a label breaks its rules, so they are made valid here rather than trusted: keys and values lowercase,
 * only [a-z0-9_-], at most 63 characters, keys starting with a letter, at most 64 labels.
 */

const MAX_LABEL_LENGTH = 63;
const MAX_LABELS = 64;

function clean(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, '_')
    .slice(0, MAX_LABEL_LENGTH);
}

/** Pure. Empty keys are dropped; a key not starting with a letter gets an `l_` prefix; first of duplicates wins. */
export function sanitizeLabels(labels: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  let n = 0;
  for (const [rawKey, rawValue] of Object.entries(labels)) {
    if (n >= MAX_LABELS) break;
    let key = clean(rawKey);
    if (!key) continue;
    if (!/^[a-z]/.test(key)) key = clean(`l_${key}`);
    if (key in out) continue;
    out[key] = clean(rawValue);
    n++;
  }
  return out;
}
