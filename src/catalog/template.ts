/**
 * Stored-query templates: report sections hold SQL with `{slot}` placeholders that the server fills at run
 * time from validated values, never from caller text (docs/architecture.md, security model 4).
 *
 * Slot values are inserted bare, so templates write the quoting themselves:
 * `` `service-v1.{dataset}.fact__orders` `` and `DATE '{start_date}'`.
 */
export const KNOWN_SLOTS = ['dataset', 'start_date', 'end_date'] as const;
type Slot = (typeof KNOWN_SLOTS)[number];

/** `{name}` where name looks like an identifier; other braces (JSON literals, regexes) are not slots. */
const SLOT_PATTERN = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

function isKnownSlot(name: string): name is Slot {
  return (KNOWN_SLOTS as readonly string[]).includes(name);
}

/** Slot names used by a template: unique, in order of first use. */
export function templateSlots(sql: string): string[] {
  const seen = new Set<string>();
  for (const m of sql.matchAll(SLOT_PATTERN)) seen.add(m[1]!);
  return [...seen];
}

/**
 * The one rule for a stored query's `parameters`, used by the listings and by runs alike: a report section's
 * template slots; saved queries are concrete SQL and have none (any braces in them are literal text).
 */
export function storedQueryParameters(kind: 'report' | 'saved', sql: string): string[] {
  return kind === 'report' ? templateSlots(sql) : [];
}

/** Throws when a template uses a slot the server cannot fill; catalog writers call this before storing. */
export function assertKnownSlots(sql: string): Slot[] {
  const slots = templateSlots(sql);
  const unknown = slots.filter((s) => !isKnownSlot(s));
  if (unknown.length > 0) {
    throw new Error(
      `template uses unknown slot(s) ${unknown.map((s) => `{${s}}`).join(', ')}; ` +
        `known slots: ${KNOWN_SLOTS.map((s) => `{${s}}`).join(', ')}`,
    );
  }
  return slots.filter(isKnownSlot);
}

const SLOT_VALUE_PATTERN: Record<Slot, RegExp> = {
  // BigQuery dataset ids: letters, digits, underscores. Nothing that could close the backtick quote.
  dataset: /^[A-Za-z0-9_]{1,1024}$/,
  start_date: /^\d{4}-\d{2}-\d{2}$/,
  end_date: /^\d{4}-\d{2}-\d{2}$/,
};

/**
 * Fills every slot of a template. Each value must match its slot's shape (dataset id, ISO date), so a
 * filled template can never carry anything but those literals; a missing value or an unknown slot throws.
 */
export function fillTemplate(sql: string, values: Partial<Record<Slot, string>>): string {
  for (const slot of assertKnownSlots(sql)) {
    const v = values[slot];
    if (v === undefined) throw new Error(`no value for slot {${slot}}`);
    if (!SLOT_VALUE_PATTERN[slot].test(v)) throw new Error(`value for slot {${slot}} has the wrong shape`);
  }
  return sql.replace(SLOT_PATTERN, (m, name: string) => (isKnownSlot(name) ? (values[name] ?? m) : m));
}
