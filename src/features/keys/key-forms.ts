import { z } from 'zod';
import type { KeyLimits } from './keys';
import { count, formatByteLimit, parseByteQuantity, TIB } from './units';

/**
 * The forms of the keys page: create a key, change a key's limits. A new field (say, a permission choice) is one
 * entry in `CreateKeyFormSchema` and its label in `CREATE_KEY_FIELD_LABELS`, plus its input in keys.page.tsx.
 */

/** Upper bounds for limits typed in the form (sanity, not policy): a billion queries a day, 1 PiB. */
const MAX_DAILY_QUERIES = 1_000_000_000;
const MAX_BYTES = 1024 * TIB;

export type LimitField = 'dailyQueries' | 'dailyBytes' | 'maxBytes';

/** Labels of the limit inputs of the create form, as the page shows them and error messages name them. */
export const LIMIT_FIELD_LABELS: Record<LimitField, string> = {
  dailyQueries: 'Queries per 24 h',
  dailyBytes: 'Bytes billed per 24 h',
  maxBytes: 'Max bytes billed per query',
};

/** Labels of every field of the create form. */
export const CREATE_KEY_FIELD_LABELS: Record<string, string> = { name: 'Name', scope: 'Reaches', memories: 'Memories', ...LIMIT_FIELD_LABELS };

/**
 * Labels of the change-limits form of each key. Worded apart from the create form's so that the page, which holds
 * one such form per key, has no two fields whose accessible names contain one another (each also names its key).
 */
export const KEY_LIMIT_FIELD_LABELS: Record<LimitField, string> = {
  dailyQueries: 'Query runs in 24 h',
  dailyBytes: 'Bytes billed in 24 h',
  maxBytes: 'Max bytes billed by one query',
};

/** A field left empty means "use the default". */
const emptyToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

const queriesField = z.preprocess(
  (v) => {
    const e = emptyToUndefined(v);
    return typeof e === 'string' ? Number(e.trim()) : e;
  },
  z
    .number({ error: 'must be a number' })
    .positive('must be greater than 0')
    .max(MAX_DAILY_QUERIES, `must be at most ${count(MAX_DAILY_QUERIES)}`)
    // Last: zod's int check also refuses unsafe integers, and a huge number should read "too big", not "not whole".
    .int('must be a whole number')
    .optional(),
);

/** A byte amount with a unit (`500 GiB`, `0.5 TiB`, `20,000,000 bytes`; a bare number is GiB), stored in bytes. */
const bytesField = z.preprocess(
  emptyToUndefined,
  z
    .string()
    .transform((text, ctx) => {
      const parsed = parseByteQuantity(text);
      if (!parsed.ok) {
        ctx.addIssue({ code: 'custom', message: parsed.message });
        return z.NEVER;
      }
      return parsed.bytes;
    })
    .pipe(z.number().max(MAX_BYTES, `must be at most ${formatByteLimit(MAX_BYTES)}`))
    .optional(),
);

const limitFields = { dailyQueries: queriesField, dailyBytes: bytesField, maxBytes: bytesField };

function toKeyLimits(f: { dailyQueries?: number; dailyBytes?: number; maxBytes?: number }): KeyLimits {
  return { dailyQueries: f.dailyQueries ?? null, dailyBytes: f.dailyBytes ?? null, maxBytesBilled: f.maxBytes ?? null };
}

/**
 * The change-limits form of one key. Every limit is a positive safe integer (queries, or bytes) or null when its
 * field is empty, which puts the key back on the Worker's default.
 */
export const KeyLimitsFormSchema = z.object(limitFields).transform(toKeyLimits);

/** What the limit inputs show for stored limits: exactly the stored value, in the units `bytesField` reads back. */
export function limitInputValues(limits: KeyLimits): Record<LimitField, string> {
  return {
    dailyQueries: limits.dailyQueries === null ? '' : String(limits.dailyQueries),
    dailyBytes: limits.dailyBytes === null ? '' : formatByteLimit(limits.dailyBytes),
    maxBytes: limits.maxBytesBilled === null ? '' : formatByteLimit(limits.maxBytesBilled),
  };
}

/** The create-key form. */
export const CreateKeyFormSchema = z
  .object({
    name: z.string().trim().min(1, 'give the key a name').max(100, 'at most 100 characters'),
    scope: z
      .string()
      .regex(/^(org|brand):[^:]+$/, 'choose what the key can reach')
      .transform((v) => {
        const at = v.indexOf(':');
        return { kind: v.slice(0, at) === 'org' ? ('org' as const) : ('brand' as const), id: v.slice(at + 1) };
      }),
    memories: z.enum(['read', 'write'], { error: 'choose read only or read and write' }).default('read'),
    ...limitFields,
  })
  .transform(({ name, scope, memories, ...limits }) => ({ name, scope, memoriesWrite: memories === 'write', limits: toKeyLimits(limits) }));
export type CreateKeyForm = z.infer<typeof CreateKeyFormSchema>;
