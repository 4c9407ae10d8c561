// What deploying needs of wrangler.toml, with line numbers: the D1 and KV ids per environment (to check them and
// to record new ones in place, keeping every comment) and the bindings and variables of each section (wrangler
// does not inherit bindings or [vars] into an [env.NAME], so a staging section must restate them). A line
// scanner for the subset of TOML the file uses (tables, arrays of tables, `key = value` on one line), not a
// general TOML parser: wrangler itself reads the file for everything else.
import { readFile, writeFile } from 'node:fs/promises';

/**
 * @typedef {{ value: string, raw: string, line: number }} Entry  line is 1-based
 * @typedef {{ name: string, array: boolean, line: number, entries: Map<string, Entry> }} Section
 *   name: the dotted table name ('' for the top level), e.g. "d1_databases", "env.staging.vars"
 */

/** @param {string} text @returns {Section[]} */
export function parseSections(text) {
  /** @type {Section[]} */
  const sections = [{ name: '', array: false, line: 1, entries: new Map() }];
  text.split('\n').forEach((rawLine, i) => {
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#')) return;
    const header = /^(\[\[?)\s*([A-Za-z0-9_.-]+)\s*\]\]?\s*(?:#.*)?$/.exec(line);
    if (header) {
      sections.push({ name: header[2] ?? '', array: header[1] === '[[', line: i + 1, entries: new Map() });
      return;
    }
    const kv = /^([A-Za-z0-9_-]+)\s*=\s*(.*)$/.exec(line);
    const current = sections[sections.length - 1];
    if (!kv || !current) return;
    const raw = stripComment(kv[2] ?? '');
    const str = /^"((?:[^"\\]|\\.)*)"$/.exec(raw);
    current.entries.set(kv[1] ?? '', { value: str ? (str[1] ?? '') : raw, raw, line: i + 1 });
  });
  return sections;
}

/** A trailing `# comment` outside a string. */
function stripComment(/** @type {string} */ v) {
  let inString = false;
  for (let i = 0; i < v.length; i++) {
    const c = v[i];
    if (c === '\\' && inString) i++;
    else if (c === '"') inString = !inString;
    else if (c === '#' && !inString) return v.slice(0, i).trim();
  }
  return v.trim();
}

/** The table-name prefix of an environment's sections. */
function prefix(/** @type {string | undefined} */ env) {
  return env ? `env.${env}.` : '';
}

/**
 * One D1 or KV binding of an environment, with where its id is (or where its table starts, when it has none).
 * @typedef {{ binding: string, name?: string, id: string | undefined, idKey: string, idLine: number | undefined, tableLine: number }} ResourceBinding
 */

/**
 * @param {Section[]} sections
 * @param {string | undefined} env
 * @returns {{ workerName: string | undefined, d1: ResourceBinding[], kv: ResourceBinding[], queues: string[], envDeclared: boolean }}
 */
export function deployTargets(sections, env) {
  const p = prefix(env);
  const top = sections.find((s) => s.name === '');
  const envTable = env ? sections.find((s) => s.name === `env.${env}`) : undefined;
  const baseName = top?.entries.get('name')?.value;
  // wrangler names an environment's Worker "<name>-<env>" unless the environment sets its own name.
  const workerName = env ? (envTable?.entries.get('name')?.value ?? (baseName ? `${baseName}-${env}` : undefined)) : baseName;
  const pick = (/** @type {string} */ table, /** @type {string} */ idKey) =>
    sections
      .filter((s) => s.name === `${p}${table}`)
      .map((s) => ({
        binding: s.entries.get('binding')?.value ?? '',
        name: s.entries.get('database_name')?.value,
        id: s.entries.get(idKey)?.value,
        idKey,
        idLine: s.entries.get(idKey)?.line,
        tableLine: s.line,
      }));
  const envDeclared = !env || sections.some((s) => s.name === `env.${env}` || s.name.startsWith(`env.${env}.`));
  const queues = [
    ...new Set(
      sections
        .filter((s) => s.name === `${p}queues.producers` || s.name === `${p}queues.consumers`)
        .map((s) => s.entries.get('queue')?.value ?? ''),
    ),
  ].filter(Boolean);
  return { workerName, d1: pick('d1_databases', 'database_id'), kv: pick('kv_namespaces', 'id'), queues, envDeclared };
}

/** An all-zero id (the committed placeholder) or an empty one. */
export function isPlaceholderId(/** @type {string | undefined} */ id) {
  return !id || /^[0-]*$/.test(id);
}

/**
 * Everything that would make a deploy of `env` fail or misbehave after the upload, as one message per problem,
 * each naming the line to fix: placeholder or missing D1/KV ids, and (for an [env.NAME]) a binding or variable of
 * the top level that the environment does not restate.
 * @param {string} text wrangler.toml's text
 * @param {string | undefined} env
 * @param {string} file the name to print
 * @returns {string[]}
 */
export function deployConfigProblems(text, env, file) {
  const sections = parseSections(text);
  const t = deployTargets(sections, env);
  const where = env ? ` of [env.${env}]` : '';
  /** @type {string[]} */
  const problems = [];
  if (!t.envDeclared) return [`${file}: no [env.${env}] section: add one (see the staging example at the end of wrangler.toml)`];
  if (!t.workerName) problems.push(`${file}:1: no top-level name = "..."`);
  const setup = `npm run setup${env ? ` -- --env ${env}` : ''}`;
  for (const [kind, list, create] of /** @type {const} */ ([
    ['d1_databases', t.d1, 'wrangler d1 create'],
    ['kv_namespaces', t.kv, 'wrangler kv namespace create'],
  ])) {
    for (const b of list) {
      if (b.idLine === undefined)
        problems.push(
          `${file}:${b.tableLine}: [[${prefix(env)}${kind}]] ${b.binding} has no ${b.idKey}: run \`${setup}\`, or add the id from \`${create}\``,
        );
      else if (isPlaceholderId(b.id)) {
        problems.push(
          `${file}:${b.idLine}: ${b.idKey} of ${b.binding}${where} is the placeholder "${b.id}": run \`${setup}\`, or put the id from \`${create}\` on this line`,
        );
      }
    }
  }
  if (env) problems.push(...missingInEnv(sections, env, file));
  return problems;
}

/** Bindings (by binding/name/queue) and [vars] of the top level that [env.NAME] does not restate. */
function missingInEnv(/** @type {Section[]} */ sections, /** @type {string} */ env, /** @type {string} */ file) {
  const p = prefix(env);
  const envLine = sections.find((s) => s.name === `env.${env}`)?.line ?? sections.find((s) => s.name.startsWith(p))?.line ?? 1;
  const ident = (/** @type {Section} */ s) =>
    s.entries.get('binding')?.value ?? s.entries.get('name')?.value ?? s.entries.get('queue')?.value ?? '';
  /** @type {string[]} */
  const out = [];
  // Top-level keys wrangler inherits, or which are not bindings: migrations (Durable Object classes) and assets.
  const notBindings = new Set(['migrations', 'assets', 'build', 'observability', 'triggers', 'env']);
  // Queue consumers name the queue, which an environment renames (its own queues): not compared.
  const topTables = sections.filter(
    (s) => s.name !== '' && s.name !== 'queues.consumers' && !s.name.startsWith('env.') && !notBindings.has(s.name.split('.')[0] ?? ''),
  );
  for (const s of topTables) {
    if (s.name === 'vars') {
      const envVars = sections.find((e) => e.name === `${p}vars`);
      for (const [key, entry] of s.entries) {
        if (!envVars?.entries.has(key))
          out.push(
            `${file}:${envVars?.line ?? envLine}: [${p}vars] lacks ${key} (line ${entry.line} sets it at the top level; wrangler does not inherit [vars])`,
          );
      }
      continue;
    }
    if (!s.array) continue;
    const id = ident(s);
    const restated = sections.some((e) => e.name === `${p}${s.name}` && ident(e) === id);
    if (!restated)
      out.push(
        `${file}:${envLine}: [env.${env}] lacks the [[${s.name}]] binding ${id} of line ${s.line} (wrangler does not inherit bindings into an environment)`,
      );
  }
  return out;
}

/**
 * Writes `value` as the `idKey` of the binding `binding` of `table` (e.g. d1_databases) in `env`, replacing the
 * line that holds it (comments and layout kept) or adding the key under the table's header.
 * @param {string} file
 * @param {{ env: string | undefined, table: 'd1_databases' | 'kv_namespaces', binding: string, idKey: string, value: string }} what
 * @returns {Promise<number>} the line written
 */
export async function recordId(file, { env, table, binding, idKey, value }) {
  const text = await readFile(file, 'utf8');
  const lines = text.split('\n');
  const section = parseSections(text).find((s) => s.name === `${prefix(env)}${table}` && s.entries.get('binding')?.value === binding);
  if (!section) throw new Error(`${file}: no [[${prefix(env)}${table}]] with binding = "${binding}"`);
  const entry = section.entries.get(idKey);
  const newLine = `${idKey} = "${value}"`;
  let line;
  if (entry) {
    const old = lines[entry.line - 1] ?? '';
    const indent = /^\s*/.exec(old)?.[0] ?? '';
    lines[entry.line - 1] = `${indent}${newLine}`;
    line = entry.line;
  } else {
    lines.splice(section.line, 0, newLine);
    line = section.line + 1;
  }
  await writeFile(file, lines.join('\n'));
  return line;
}

/**
 * One variable of an environment's [vars] (`[env.NAME.vars]` with `env`), with its line, or undefined.
 * @param {string} text @param {string | undefined} env @param {string} name
 * @returns {Entry | undefined}
 */
export function varEntry(text, env, name) {
  return parseSections(text)
    .find((s) => s.name === `${prefix(env)}vars`)
    ?.entries.get(name);
}

/**
 * Writes `name = "value"` into the environment's [vars] (replacing its line, keeping its comment lines above; or
 * appended at the table's end) and returns the line. The value is a plain string (setup validates it first).
 * @param {string} file
 * @param {{ env: string | undefined, name: string, value: string }} v
 * @returns {Promise<number>}
 */
export async function recordVar(file, { env, name, value }) {
  const text = await readFile(file, 'utf8');
  const lines = text.split('\n');
  const sections = parseSections(text);
  const index = sections.findIndex((x) => x.name === `${prefix(env)}vars`);
  const section = sections[index];
  if (!section) throw new Error(`${file}: no [${prefix(env)}vars]`);
  const newLine = `${name} = ${JSON.stringify(value)}`;
  const entry = section.entries.get(name);
  if (entry) {
    lines[entry.line - 1] = newLine;
    await writeFile(file, lines.join('\n'));
    return entry.line;
  }
  const last = Math.max(section.line, ...[...section.entries.values()].map((e) => e.line));
  lines.splice(last, 0, newLine);
  await writeFile(file, lines.join('\n'));
  return last + 1;
}

/**
 * The top-level [vars] of the repository's wrangler.toml, as strings: the Worker's defaults for what its parsed
 * Config reads, for tools that run Worker code outside the Worker (the contract suite, benchmarks).
 * @returns {Promise<Record<string, string>>}
 */
export async function workerVars() {
  const text = await readFile(new URL('../../wrangler.toml', import.meta.url), 'utf8');
  const vars = parseSections(text).find((s) => s.name === 'vars');
  return Object.fromEntries([...(vars?.entries ?? new Map())].map(([k, e]) => [k, e.value]));
}
