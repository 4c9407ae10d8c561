/**
 * Every numeric per-key setting: a column of `api_keys` that overrides one of the Worker's DEFAULT_* variables
 * when not NULL. This list is the one place a setting is declared: the Worker's key read (`src/auth/api-keys.ts`,
 * which resolves every setting into `Principal.limits`), its writes (`src/features/keys/store.ts`), the admin
 * pages' forms and the admin CLI's flags (`key create`, `key limits`) are all made from it. Adding a setting is a
 * migration that adds the column, one entry here, and the check that enforces `principal.limits.<name>`
 * (docs/architecture.md, "A new per-key setting").
 *
 * Pure data: no I/O, importable by the Node CLI.
 */
export const KEY_SETTINGS = {
  dailyQueries: {
    column: 'daily_query_limit',
    flag: 'daily-queries',
    unit: 'count',
    default: 'DEFAULT_DAILY_QUERY_LIMIT',
    label: 'Queries per 24 h',
    editLabel: 'Query runs in 24 h',
    help: 'query runs per rolling 24 hours',
  },
  dailyBytes: {
    column: 'daily_bytes_limit',
    flag: 'daily-bytes',
    unit: 'bytes',
    default: 'DEFAULT_DAILY_BYTES_LIMIT',
    label: 'Bytes billed per 24 h',
    editLabel: 'Bytes billed in 24 h',
    help: 'bytes billed per rolling 24 hours',
  },
  maxBytesBilled: {
    column: 'max_bytes_billed',
    flag: 'max-bytes-billed',
    unit: 'bytes',
    default: 'DEFAULT_MAX_BYTES_BILLED',
    label: 'Max bytes billed per query',
    editLabel: 'Max bytes billed by one query',
    help: 'byte-scan ceiling of one query (BigQuery maximumBytesBilled)',
  },
  checksPerMinute: {
    column: 'checks_per_minute',
    flag: 'checks-per-minute',
    unit: 'count',
    default: 'DEFAULT_CHECKS_PER_MINUTE',
    label: 'Dry runs and refusals per minute',
    editLabel: 'Dry runs and refused queries in a minute',
    help: 'dry runs plus requests the SQL guard refuses, per minute',
  },
  pageReadsPerMinute: {
    column: 'page_reads_per_minute',
    flag: 'page-reads-per-minute',
    unit: 'count',
    default: 'DEFAULT_PAGE_READS_PER_MINUTE',
    label: 'Result pages per minute',
    editLabel: 'Result pages read in a minute',
    help: 'result pages read with a cursor, per minute',
  },
  maxRunningJobs: {
    column: 'max_running_jobs',
    flag: 'max-running-jobs',
    unit: 'count',
    default: 'DEFAULT_MAX_RUNNING_JOBS',
    label: 'Long jobs running at once',
    editLabel: 'Long query jobs allowed to run together',
    help: 'long query jobs (async, tasks, pending cursors) running at once',
  },
  jobTimeoutMs: {
    column: 'job_timeout_ms',
    flag: 'job-timeout-ms',
    unit: 'count',
    default: 'DEFAULT_JOB_TIMEOUT_MS',
    label: 'Longest job duration (ms)',
    editLabel: 'Longest run of one long query job, in ms',
    help: 'longest run of one long query job, ms (BigQuery jobTimeoutMs)',
  },
} as const satisfies Record<string, KeySettingSpec>;

export interface KeySettingSpec {
  /** The `api_keys` column; NULL = the default. */
  column: string;
  /** The admin CLI's option, `--<flag> N|default`. */
  flag: string;
  /** How people type and read it: a count, or bytes (`500 GiB`). */
  unit: 'count' | 'bytes';
  /** The Worker variable that applies while the column is NULL. */
  default: string;
  /** The admin pages' label on the create form. */
  label: string;
  /**
   * Its label on each key's change form, worded apart from `label` so that the keys page, which holds one such
   * form per key beside the create form, has no two fields whose accessible names contain one another.
   */
  editLabel: string;
  /** One line of CLI help. */
  help: string;
}

export type KeySettingName = keyof typeof KEY_SETTINGS;

/** A key's own settings as stored: a positive integer, or null for the Worker's default. */
export type KeySettings = Record<KeySettingName, number | null>;

export const KEY_SETTING_NAMES = Object.keys(KEY_SETTINGS) as KeySettingName[];

/** What applies to a key for each setting: its own value, else the Worker's default. Every setting is enforced from it. */
export type KeyLimits = Record<KeySettingName, number>;

/** Each setting's default: the value of its DEFAULT_* Worker variable (from the parsed configuration). */
export function settingDefaults(config: Record<(typeof KEY_SETTINGS)[KeySettingName]['default'], number>): KeyLimits {
  const out = {} as KeyLimits;
  for (const name of KEY_SETTING_NAMES) out[name] = config[KEY_SETTINGS[name].default];
  return out;
}

/**
 * The limits of a key whose own settings are `own` (a missing or null one is the default). The one place a
 * setting's value is resolved: the key read (src/auth/api-keys.ts) puts the result in `Principal.limits`, and the
 * admin pages show the same numbers.
 */
export function limitsOf(own: Partial<KeySettings>, defaults: KeyLimits): KeyLimits {
  const out = {} as KeyLimits;
  for (const name of KEY_SETTING_NAMES) out[name] = own[name] ?? defaults[name];
  return out;
}

/** The settings of a row that holds every setting column (a `SELECT` of `KEY_SETTING_COLUMNS`). */
export function settingsOfRow(row: Record<string, unknown>): KeySettings {
  const out = {} as KeySettings;
  for (const name of KEY_SETTING_NAMES) {
    const v = row[KEY_SETTINGS[name].column];
    // Writers store positive integers; a row edited by hand is shown as it is (the usage check reports it).
    if (v !== null && typeof v !== 'number')
      throw new Error(`api_keys.${KEY_SETTINGS[name].column} holds ${JSON.stringify(v)}, not a number or NULL`);
    out[name] = v;
  }
  return out;
}

/** Every setting column, comma-separated, for a SELECT of `api_keys` aliased `k`. */
export const KEY_SETTING_COLUMNS = KEY_SETTING_NAMES.map((n) => `k.${KEY_SETTINGS[n].column}`).join(', ');
