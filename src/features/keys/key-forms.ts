import { nameProblem } from '../../lib/text';
import { z } from 'zod';
import { KEY_SETTING_NAMES, KEY_SETTINGS, type KeySettingName, type KeySettings } from '../../auth/key-settings';
import { count, formatByteLimit, parseByteQuantity, TIB } from './units';

/**
 * The forms of the keys page: create a key, change a key's limits. The limit inputs are made from the key settings
 * (src/auth/key-settings.ts), so a new setting needs nothing here; another field (say, a permission choice) is one entry in
 * `CreateKeyFormSchema` and its label in `CREATE_KEY_FIELD_LABELS`, plus its input in keys.page.tsx.
 */

/** Upper bounds for limits typed in the form (sanity, not policy): a billion per period, 1 PiB. */
const MAX_COUNT = 1_000_000_000;
const MAX_BYTES = 1024 * TIB;

/**
 * The form field of each key setting. The same as the setting's name, except the per-query byte ceiling, whose
 * field has always been `maxBytes` (scripts that post the form keep working).
 */
export function formField(name: KeySettingName): string {
  return name === 'maxBytesBilled' ? 'maxBytes' : name;
}

/** Labels of every field of the create form. */
export const CREATE_KEY_FIELD_LABELS: Record<string, string> = {
  name: 'Name',
  scope: 'Reaches',
  memories: 'Memories',
  ...Object.fromEntries(KEY_SETTING_NAMES.map((n) => [formField(n), KEY_SETTINGS[n].label])),
};

/** Labels of the change-limits form of each key (see `editLabel`). */
export const KEY_LIMIT_FIELD_LABELS: Record<string, string> = Object.fromEntries(
  KEY_SETTING_NAMES.map((n) => [formField(n), KEY_SETTINGS[n].editLabel]),
);

/** A field left empty means "use the default". */
const emptyToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

const countField = z.preprocess(
  (v) => {
    const e = emptyToUndefined(v);
    return typeof e === 'string' ? Number(e.trim()) : e;
  },
  z
    .number({ error: 'must be a number' })
    .positive('must be greater than 0')
    .max(MAX_COUNT, `must be at most ${count(MAX_COUNT)}`)
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

/** One input per key setting, by form field, read as the setting's unit. */
const limitFields: Record<string, typeof countField | typeof bytesField> = Object.fromEntries(
  KEY_SETTING_NAMES.map((n) => [formField(n), KEY_SETTINGS[n].unit === 'bytes' ? bytesField : countField]),
);

function toKeySettings(f: Record<string, number | undefined>): KeySettings {
  return Object.fromEntries(KEY_SETTING_NAMES.map((n) => [n, f[formField(n)] ?? null])) as KeySettings;
}

/**
 * The change-limits form of one key. Every setting is a positive safe integer (a count, or bytes) or null when its
 * field is empty, which puts the key back on the Worker's default.
 */
export const KeyLimitsFormSchema = z.object(limitFields).transform(toKeySettings);

/** What the limit inputs show for stored settings: exactly the stored value, in the units the field reads back. */
export function limitInputValues(settings: KeySettings): Record<string, string> {
  return Object.fromEntries(
    KEY_SETTING_NAMES.map((n) => {
      const v = settings[n];
      return [formField(n), v === null ? '' : KEY_SETTINGS[n].unit === 'bytes' ? formatByteLimit(v) : String(v)];
    }),
  );
}

/** The create-key form. */
export const CreateKeyFormSchema = z
  .object({
    name: z
      .string()
      .trim()
      .min(1, 'give the key a name')
      .max(100, 'at most 100 characters')
      .refine((v) => nameProblem(v) === null, 'must not contain control characters'),
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
  .transform(({ name, scope, memories, ...limits }) => ({
    name,
    scope,
    memoriesWrite: memories === 'write',
    limits: toKeySettings(limits),
  }));
