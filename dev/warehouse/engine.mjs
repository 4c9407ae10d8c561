// The SQL engine behind the local warehouse: DuckDB with the project (`service-v1` by default) attached READ_ONLY as a
// catalog (each dataset a schema). `analyze` does what BigQuery's dry run does (statement type, referenced
// tables and routines, byte estimate, result schema, and every error a dry run would raise); `execute`
// runs an analysed query on its own connection so it can be interrupted.
import { DuckDBInstance } from '@duckdb/node-api';
import { DEMO_ROUTINE, META_SCHEMA, sqlIdent, sqlString } from './demo-data.mjs';
import { ALLOWED_TABLE_FUNCTIONS, DialectError, SUPPORT_MACROS, WILDCARD_SHARD_ALIAS, classify, lineColumn, toDuckDb } from './dialect.mjs';
import { EncodeError, fieldFor } from './encode.mjs';
import { BqError, invalidQuery } from './errors.mjs';

/** Built-in functions a query may not call: file access, settings and catalog introspection. */
const DENIED_FUNCTION =
  /^(read_|glob$|query$|query_table$|duckdb_|pragma_|current_setting$|getvariable$|sniff_csv$|parquet_|iceberg_|delta_|sqlite_|postgres_|mysql_|which_secret$|enable_|disable_|checkpoint$|force_checkpoint$)/i;

/**
 * @typedef {{ projectId: string, datasetId: string, tableId: string }} TableRef
 * @typedef {{ projectId: string, datasetId: string, routineId: string }} RoutineRef
 * @typedef {{
 *   statementType: string, runnable: boolean, duckSql: string, referencedTables: TableRef[],
 *   referencedRoutines: RoutineRef[], totalBytesProcessed: number, billedPerTable: number[],
 *   informationSchemaPerTable?: boolean[], readsWildcard?: boolean,
 *   fields: object[], columnNames: string[], sourceSql: string, rewritten: import('./dialect.mjs').Rewritten | null
 * }} Analysis
 */

/**
 * @param {{ dbPath: string, project: string, today: string, location: string, threads?: number, memoryLimit?: string }} opts
 */
export async function openEngine(opts) {
  const instance = await DuckDBInstance.create(':memory:', {
    threads: String(opts.threads ?? 2),
    memory_limit: opts.memoryLimit ?? '2GB',
  });
  const conn = await instance.connect();
  const P = sqlIdent(opts.project);
  await conn.run(`SET GLOBAL TimeZone = 'UTC'`);
  await conn.run(`ATTACH ${sqlString(opts.dbPath)} AS ${P} (READ_ONLY)`);
  for (const m of SUPPORT_MACROS) await conn.run(m);
  const catalog = await loadCatalog(conn, opts.project);
  // Belt and braces beyond READ_ONLY: no file access, no extension loading, and nobody can undo that.
  await conn.run('SET enable_external_access = false');
  await conn.run('SET lock_configuration = true');
  return new Engine(instance, conn, catalog, opts);
}

async function loadCatalog(conn, project) {
  const P = sqlString(project);
  /** @type {Map<string, { name: string, tables: Map<string, { name: string, rows: number, columns: Map<string, { name: string, bytes: number }> }>, routines: Map<string, string> }>} */
  const datasets = new Map();
  const schemas = await conn.runAndReadAll(`SELECT schema_name FROM duckdb_schemas() WHERE database_name = ${P}
    AND schema_name NOT IN ('main', 'information_schema', 'pg_catalog', ${sqlString(META_SCHEMA)})`);
  for (const [name] of schemas.getRowsJS())
    datasets.set(String(name).toLowerCase(), { name: String(name), tables: new Map(), routines: new Map() });
  const bytes = await conn.runAndReadAll(`SELECT c.schema_name, c.table_name, c.column_name, coalesce(b.bytes, 0), coalesce(b.row_count, 0)
    FROM duckdb_columns() c LEFT JOIN ${sqlIdent(project)}.${sqlIdent(META_SCHEMA)}.column_bytes b
      ON b.dataset = c.schema_name AND b.table_name = c.table_name AND b.column_name = c.column_name
    WHERE c.database_name = ${P} ORDER BY c.schema_name, c.table_name, c.column_index`);
  for (const [schema, table, column, size, rows] of bytes.getRowsJS()) {
    const ds = datasets.get(String(schema).toLowerCase());
    if (!ds) continue;
    const key = String(table).toLowerCase();
    const t = ds.tables.get(key) ?? { name: String(table), rows: Number(rows), columns: new Map() };
    t.columns.set(String(column).toLowerCase(), { name: String(column), bytes: Number(size) });
    ds.tables.set(key, t);
  }
  const routines = await conn.runAndReadAll(`SELECT DISTINCT schema_name, function_name FROM duckdb_functions()
    WHERE database_name = ${P} AND function_type = 'macro'`);
  for (const [schema, fn] of routines.getRowsJS()) {
    datasets.get(String(schema).toLowerCase())?.routines.set(String(fn).toLowerCase(), String(fn));
  }
  return datasets;
}

class Engine {
  constructor(instance, conn, catalog, opts) {
    this.instance = instance;
    this.conn = conn;
    this.catalog = catalog;
    this.project = opts.project;
    this.today = opts.today;
    this.location = opts.location;
    // The analysis connection is shared; DuckDB connections are not safe for concurrent statements.
    this.queue = Promise.resolve();
  }

  /** Dataset names, e.g. ['acme', 'globex', 'umbrella']. */
  datasets() {
    return [...this.catalog.values()].map((d) => d.name);
  }

  /**
   * Serialises work on the analysis connection.
   * @template T
   * @param {() => Promise<T>} fn
   * @returns {Promise<T>}
   */
  exclusive(fn) {
    const run = this.queue.then(fn, fn);
    this.queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /**
   * Everything BigQuery's dry run checks and reports. Throws BqError for what BigQuery would reject.
   * @param {string} sql
   * @param {{ jobProject: string, allowedDatasets?: string[] | null }} opts
   * @returns {Promise<Analysis>}
   */
  async analyze(sql, opts) {
    let statementType;
    try {
      statementType = classify(sql).statementType;
    } catch (e) {
      throw dialectFailure(e, sql);
    }
    const base = {
      sourceSql: sql,
      duckSql: '',
      referencedTables: [],
      referencedRoutines: [],
      totalBytesProcessed: 0,
      billedPerTable: [],
      fields: [],
      columnNames: [],
      rewritten: null,
    };
    if (statementType !== 'SELECT') return { ...base, statementType, runnable: false };
    let rewritten;
    try {
      rewritten = toDuckDb(sql, {
        project: opts.jobProject,
        datasets: this.datasets(),
        today: this.today,
        tablesOf: (dataset) => [...(this.catalog.get(dataset.toLowerCase())?.tables.values() ?? [])].map((t) => t.name),
      });
    } catch (e) {
      throw dialectFailure(e, sql);
    }
    return this.exclusive(async () => {
      const astJson = await this.conn.runAndReadAll('SELECT json_serialize_sql(CAST($1 AS VARCHAR))', [rewritten.sql]);
      const ast = JSON.parse(String(astJson.getRowsJS()[0][0]));
      if (ast.error) {
        const pos = Number(ast.position);
        throw located(
          invalidQuery(cleanMessage(`Parser Error: ${ast.error_message}`)),
          sql,
          Number.isFinite(pos) ? rewritten.sourceOffset(pos) : null,
        );
      }
      const facts = collectFacts(ast);
      // Fail closed: a FROM item of a kind this analysis does not read could name data it never checks.
      if (facts.unknownRefs.length) throw invalidQuery(`Unsupported table reference in the local warehouse: ${facts.unknownRefs[0]}`);
      const tables = this.resolveTables(facts, opts, sql, rewritten);
      const routines = this.resolveRoutines(facts, opts, sql, rewritten);
      let prepared;
      try {
        prepared = await this.conn.prepare(rewritten.sql);
      } catch (e) {
        throw duckFailure(e, sql, rewritten);
      }
      const duckNames = [];
      const types = [];
      for (let i = 0; i < prepared.columnCount; i++) {
        duckNames.push(prepared.columnName(i));
        types.push(prepared.columnType(i));
      }
      prepared.destroySync();
      const columnNames = bigQueryColumnNames(ast, duckNames);
      let fields;
      try {
        fields = types.map((t, i) => fieldFor(columnNames[i], t));
      } catch (e) {
        if (e instanceof EncodeError) throw invalidQuery(e.message);
        throw e;
      }
      const perTable = this.estimateBytes(tables, facts);
      return {
        ...base,
        statementType,
        runnable: true,
        duckSql: rewritten.sql,
        rewritten,
        referencedTables: tables
          .filter((t) => !t.tableId.startsWith('INFORMATION_SCHEMA.'))
          .map(({ projectId, datasetId, tableId }) => ({ projectId, datasetId, tableId })),
        referencedRoutines: routines,
        totalBytesProcessed: perTable.reduce((a, b) => a + b, 0),
        billedPerTable: perTable,
        // INFORMATION_SCHEMA views bill their 10 MB minimum even when they read no column (server.mjs, billing).
        informationSchemaPerTable: tables.map((t) => t.tableId.startsWith('INFORMATION_SCHEMA.')),
        readsWildcard: rewritten.sql.includes(WILDCARD_SHARD_ALIAS),
        fields,
        columnNames,
      };
    });
  }

  resolveTables(facts, opts, sql, rewritten) {
    const seen = new Map();
    for (const ref of facts.tables) {
      const at = rewritten.sourceOffset(ref.location);
      if (!ref.catalog && !ref.schema) {
        if (facts.ctes.has(ref.table.toLowerCase())) continue;
        throw located(invalidQuery(`Table "${ref.table}" must be qualified with a dataset (e.g. dataset.table).`), sql, at);
      }
      const projectId = ref.catalog || opts.jobProject;
      const display = `${projectId}:${ref.schema}.${ref.table}`;
      if (projectId !== this.project) {
        throw new BqError(
          403,
          'accessDenied',
          `Access Denied: Table ${display}: User does not have permission to query table ${display}, or perhaps it does not exist.`,
        );
      }
      const ds = this.catalog.get(ref.schema.toLowerCase());
      if (!ds)
        throw new BqError(404, 'notFound', `Not found: Dataset ${projectId}:${ref.schema} was not found in location ${this.location}`);
      const t = ds.tables.get(ref.table.toLowerCase());
      if (!t)
        throw new BqError(
          404,
          'notFound',
          `Not found: Table ${projectId}:${ds.name}.${ref.table} was not found in location ${this.location}`,
        );
      if (opts.allowedDatasets && !opts.allowedDatasets.some((d) => d.toLowerCase() === ds.name.toLowerCase())) {
        const name = `${projectId}:${ds.name}.${t.name}`;
        throw new BqError(
          403,
          'accessDenied',
          `Access Denied: Table ${name}: User does not have permission to query table ${name}, or perhaps it does not exist.`,
        );
      }
      const key = `${ds.name}.${t.name}`;
      const entry = seen.get(key) ?? {
        projectId,
        datasetId: ds.name,
        tableId: t.name,
        table: t,
        allColumns: false,
        excluded: new Set(),
        names: new Set(),
      };
      entry.names.add(t.name.toLowerCase());
      if (ref.alias) entry.names.add(ref.alias.toLowerCase());
      seen.set(key, entry);
    }
    const list = [...seen.values()];
    for (const star of facts.stars) {
      for (const entry of list) {
        const read = star.tables.find(
          (t) => t.schema.toLowerCase() === entry.datasetId.toLowerCase() && t.table.toLowerCase() === entry.tableId.toLowerCase(),
        );
        const relation = star.relation.toLowerCase();
        // `alias.*` in a subquery without a FROM of its own (`(SELECT AS STRUCT t.*)`) reads the outer table.
        const outer = !read && star.tables.length === 0 && relation !== '' && entry.names.has(relation);
        if (!read && !outer) continue;
        if (read && relation && !entry.names.has(relation) && read.relation !== relation) continue;
        entry.allColumns = true;
        for (const x of star.exclude) entry.excluded.add(x.toLowerCase());
      }
    }
    // A table's row alias used as a value (`TO_JSON_STRING(t)`, `SELECT t`, `STRUCT(t)`, also inside a scalar
    // subquery) reads the whole row: BigQuery bills every column of it (on-demand pricing bills "the columns that
    // you select"; a row is all of them). When the name is also a column of the table the ambiguity is resolved
    // towards more bytes: an estimate here errs high, never low.
    for (const entry of list) {
      const shardOf = (w) =>
        w.schema.toLowerCase() === entry.datasetId.toLowerCase() && w.table.toLowerCase() === entry.tableId.toLowerCase();
      const named = [...entry.names].some((n) => facts.rowRefs.has(n));
      // A wildcard's alias (`FROM \`p.ds.events_*\` AS e ... TO_JSON_STRING(e)`) is every matched shard's row.
      if (named || facts.wildcardRelations.some((w) => facts.rowRefs.has(w.relation) && shardOf(w))) {
        entry.allColumns = true;
        entry.excluded.clear();
      }
    }
    return list;
  }

  resolveRoutines(facts, opts, sql, rewritten) {
    const out = new Map();
    for (const fn of facts.functions) {
      // DuckDB expands list literals and operators to main.* functions; those are not routines.
      if (!fn.schema || (!fn.catalog && fn.schema === 'main')) {
        if (DENIED_FUNCTION.test(fn.name))
          throw located(invalidQuery(`Function not found: ${fn.name}`), sql, rewritten.sourceOffset(fn.location));
        continue;
      }
      const projectId = fn.catalog || opts.jobProject;
      const ds = projectId === this.project ? this.catalog.get(fn.schema.toLowerCase()) : undefined;
      const routine = ds?.routines.get(fn.name.toLowerCase());
      if (!ds || !routine)
        throw located(invalidQuery(`Function not found: ${fn.schema}.${fn.name}`), sql, rewritten.sourceOffset(fn.location));
      if (opts.allowedDatasets && !opts.allowedDatasets.some((d) => d.toLowerCase() === ds.name.toLowerCase())) {
        throw new BqError(
          403,
          'accessDenied',
          `Access Denied: Routine ${projectId}:${ds.name}.${routine}: User does not have permission to invoke routine ${projectId}:${ds.name}.${routine}.`,
        );
      }
      out.set(`${ds.name}.${routine}`, { projectId, datasetId: ds.name, routineId: routine });
    }
    for (const tf of facts.tableFunctions) {
      if (!ALLOWED_TABLE_FUNCTIONS.has(tf.name.toLowerCase())) {
        throw located(invalidQuery(`Table-valued function not found: ${tf.name}`), sql, rewritten.sourceOffset(tf.location));
      }
    }
    return [...out.values()];
  }

  /** BigQuery bills the referenced columns of every referenced table, whole columns, regardless of filters. */
  estimateBytes(tables, facts) {
    return tables.map((entry) => {
      let bytes = 0;
      for (const [key, col] of entry.table.columns) {
        if (entry.allColumns ? !entry.excluded.has(key) : facts.columnNames.has(key)) bytes += col.bytes;
      }
      return bytes;
    });
  }

  /**
   * Runs an analysed SELECT on a fresh connection. `onConnection` receives it so a cancel can interrupt.
   * @param {Analysis} analysis
   * @param {(conn: import('@duckdb/node-api').DuckDBConnection) => void} [onConnection]
   * @returns {Promise<import('@duckdb/node-api').DuckDBMaterializedResult>}
   */
  async execute(analysis, onConnection = () => {}) {
    const conn = await this.instance.connect();
    onConnection(conn);
    try {
      return await conn.run(analysis.duckSql);
    } catch (e) {
      if (/INTERRUPT/i.test(String(e?.message)))
        throw new BqError(400, 'stopped', 'Job execution was cancelled: User requested cancellation');
      throw duckFailure(e, analysis.sourceSql, analysis.rewritten);
    } finally {
      conn.closeSync();
    }
  }

  close() {
    this.conn.closeSync();
    this.instance.closeSync();
  }
}

// ---------------------------------------------------------------------------------------------------------
// AST facts (DuckDB's json_serialize_sql)

/** Kinds of FROM items (DuckDB TableRef types) whose references `collectFacts` reads; any other is refused. */
const KNOWN_TABLE_REFS = new Set(['BASE_TABLE', 'SUBQUERY', 'JOIN', 'TABLE_FUNCTION', 'EXPRESSION_LIST', 'EMPTY', 'PIVOT']);

function collectFacts(ast) {
  /**
   * @type {{ tables: { catalog: string, schema: string, table: string, alias: string, location: number }[], ctes: Set<string>,
   *   functions: { name: string, schema: string, catalog: string, location: number }[], tableFunctions: { name: string, location: number }[],
   *   columnNames: Set<string>, rowRefs: Set<string>, wildcardRelations: { relation: string, schema: string, table: string }[],
   *   stars: any[], unknownRefs: string[] }}
   */
  const facts = {
    tables: [],
    ctes: new Set(),
    functions: [],
    tableFunctions: [],
    columnNames: new Set(),
    rowRefs: new Set(),
    wildcardRelations: [],
    stars: [],
    unknownRefs: [],
  };
  const checkRef = (ref) => {
    if (ref && typeof ref === 'object' && !KNOWN_TABLE_REFS.has(ref.type)) facts.unknownRefs.push(String(ref.type));
  };
  const visit = (node) => {
    if (Array.isArray(node)) {
      for (const x of node) visit(x);
      return;
    }
    if (!node || typeof node !== 'object') return;
    if ('from_table' in node) checkRef(node.from_table);
    if (node.type === 'JOIN') {
      checkRef(node.left);
      checkRef(node.right);
    }
    if (node.type === 'PIVOT') checkRef(node.source);
    if (node.cte_map?.map) for (const entry of node.cte_map.map) facts.ctes.add(String(entry.key).toLowerCase());
    if (node.type === 'BASE_TABLE') {
      facts.tables.push({
        catalog: node.catalog_name ?? '',
        schema: node.schema_name ?? '',
        table: node.table_name,
        alias: node.alias ?? '',
        location: Number(node.query_location),
      });
    }
    if (node.type === 'TABLE_FUNCTION' && node.function?.function_name) {
      facts.tableFunctions.push({ name: node.function.function_name, location: Number(node.query_location) });
    }
    if (node.class === 'FUNCTION') {
      facts.functions.push({
        name: node.function_name,
        schema: node.schema ?? '',
        catalog: node.catalog ?? '',
        location: Number(node.query_location),
      });
    }
    if (node.class === 'COLUMN_REF') {
      const names = node.column_names ?? [];
      for (const n of names) facts.columnNames.add(String(n).toLowerCase());
      // A lone name may be a range variable (a table's row), resolved against the tables in resolveTables.
      if (names.length === 1) facts.rowRefs.add(String(names[0]).toLowerCase());
    }
    if (Array.isArray(node.using_columns)) for (const n of node.using_columns) facts.columnNames.add(String(n).toLowerCase());
    // A wildcard table's expansion reads each shard with `*`; what it bills is what the user's query names.
    if (node.type === 'SELECT_NODE' && node.from_table?.alias !== WILDCARD_SHARD_ALIAS) {
      const fromTables = baseTablesOf(node.from_table);
      for (const t of fromTables) if (t.relation) facts.wildcardRelations.push({ relation: t.relation, schema: t.schema, table: t.table });
      for (const star of starsOf(node.select_list)) facts.stars.push({ ...star, tables: fromTables });
      if (node.from_table?.type === 'PIVOT') facts.stars.push({ relation: '', exclude: [], tables: fromTables });
    }
    for (const v of Object.values(node)) if (v && typeof v === 'object') visit(v);
  };
  visit(ast.statements);
  return facts;
}

/**
 * Base tables directly in a FROM tree (joins, pivots), not inside subqueries, except a wildcard table's expansion:
 * its shards are the base tables of whatever reads the wildcard (`relation`: the wildcard's alias).
 * @returns {{ schema: string, table: string, relation?: string }[]}
 */
function baseTablesOf(from) {
  if (!from || typeof from !== 'object') return [];
  if (from.type === 'BASE_TABLE') return [{ schema: from.schema_name ?? '', table: from.table_name }];
  if (from.type === 'JOIN') return [...baseTablesOf(from.left), ...baseTablesOf(from.right)];
  if (from.type === 'PIVOT') return baseTablesOf(from.source);
  if (from.type === 'SUBQUERY') {
    const relation = String(from.alias ?? '').toLowerCase();
    return wildcardShards(from.subquery).map((t) => ({ ...t, relation }));
  }
  return [];
}

/** The shards of a wildcard table's expansion (a union of SELECTs from base tables aliased WILDCARD_SHARD_ALIAS). */
function wildcardShards(node) {
  if (!node || typeof node !== 'object') return [];
  if (node.node) return wildcardShards(node.node);
  if (node.type === 'SET_OPERATION_NODE') {
    const parts = node.children ?? [node.left, node.right];
    return parts.flatMap(wildcardShards);
  }
  if (node.type === 'SELECT_NODE' && node.from_table?.type === 'BASE_TABLE' && node.from_table.alias === WILDCARD_SHARD_ALIAS) {
    return [{ schema: node.from_table.schema_name ?? '', table: node.from_table.table_name }];
  }
  return [];
}

function starsOf(list) {
  const out = [];
  const visit = (node) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object' || node.class === 'SUBQUERY') return;
    if (node.class === 'STAR') out.push({ relation: node.relation_name ?? '', exclude: (node.exclude_list ?? []).map(String) });
    for (const v of Object.values(node)) if (v && typeof v === 'object') visit(v);
  };
  visit(list);
  return out;
}

/**
 * BigQuery names result columns from aliases and column references; other expressions are f0_, f1_, ...
 * Positions covered by `*` keep DuckDB's names (their count is only known after binding).
 */
function bigQueryColumnNames(ast, duckNames) {
  let node = ast.statements?.[0]?.node;
  while (node && node.type === 'SET_OPERATION_NODE') node = node.left;
  if (!node || node.type !== 'SELECT_NODE') return duckNames;
  const items = node.select_list.map((e) => {
    if (e.class === 'STAR') return { star: true };
    if (e.alias) return { name: e.alias };
    if (e.class === 'COLUMN_REF') return { name: e.column_names[e.column_names.length - 1] };
    return { name: null };
  });
  const names = [...duckNames];
  let anon = 0;
  const firstStar = items.findIndex((it) => it.star);
  const prefix = firstStar < 0 ? items : items.slice(0, firstStar);
  prefix.forEach((it, i) => {
    if (i < names.length) names[i] = it.name ?? `f${anon++}_`;
  });
  if (firstStar >= 0) {
    let lastStar = -1;
    items.forEach((it, i) => {
      if (it.star) lastStar = i;
    });
    const suffix = items.slice(lastStar + 1);
    suffix.forEach((it, k) => {
      const i = names.length - suffix.length + k;
      if (i >= firstStar) names[i] = it.name ?? `f${anon++}_`;
    });
  }
  return names;
}

// ---------------------------------------------------------------------------------------------------------
// Errors: DuckDB's messages restated about the user's SQL, positions mapped back to it.

function dialectFailure(e, sql) {
  if (e instanceof DialectError) return located(invalidQuery(e.message), sql, e.offset);
  return e;
}

/** Appends " at [line:column]" as BigQuery does. */
function located(err, sql, offset) {
  if (offset === null || offset === undefined || !Number.isFinite(offset)) return err;
  const { line, column } = lineColumn(sql, offset);
  err.message = `${err.message} at [${line}:${column}]`;
  return err;
}

function duckFailure(e, sql, rewritten) {
  const raw = String(e?.message ?? e);
  if (/^(INTERNAL|FATAL) Error/i.test(raw))
    return new BqError(500, 'internalError', 'An internal error occurred and the request could not be completed.');
  if (/Out of Memory Error/i.test(raw))
    return new BqError(
      400,
      'resourcesExceeded',
      'Resources exceeded during query execution: The query could not be executed in the allotted memory.',
    );
  let offset = null;
  const m = /\nLINE (\d+): (.*)\n( *)\^/.exec(raw);
  if (m && rewritten) {
    const lineNo = Number(m[1]);
    const snippet = m[2];
    const caret = m[3].length - `LINE ${lineNo}: `.length;
    const lines = rewritten.sql.split('\n');
    const lineText = lines[lineNo - 1] ?? '';
    const lead = snippet.startsWith('...') ? 3 : 0;
    const core = snippet.slice(lead).replace(/\.\.\.$/, '');
    const idx = lineText.indexOf(core);
    if (idx >= 0) {
      const lineStart = lines.slice(0, lineNo - 1).reduce((n, l) => n + l.length + 1, 0);
      offset = rewritten.sourceOffset(lineStart + idx + caret - lead);
    }
  }
  const message = cleanMessage(raw.replace(/\n\s*\nLINE [\s\S]*$/, '').replace(/\nLINE [\s\S]*$/, ''));
  return located(invalidQuery(message), sql, offset);
}

/** @type {[RegExp, string][]} DuckDB type names in messages -> BigQuery's */
const DUCK_TYPES = [
  [/TIMESTAMP WITH TIME ZONE|TIMESTAMPTZ/g, 'TIMESTAMP'],
  [/\b(BIGINT|INTEGER|INT32|INT64|HUGEINT|SMALLINT|TINYINT|INT128|INT16|INT8)\b/g, 'INT64'],
  [/\bVARCHAR\b/g, 'STRING'],
  [/\bDOUBLE\b/g, 'FLOAT64'],
  [/\bBOOLEAN\b/g, 'BOOL'],
  [/\bBLOB\b/g, 'BYTES'],
  [/DECIMAL\(\d+,\d+\)/g, 'NUMERIC'],
];

const HELPER_NAMES = [
  [/bq_safe_divide/g, 'SAFE_DIVIDE'],
  [/bq_week_start/g, 'DATE_TRUNC'],
  [/bq_regexp_extract/g, 'REGEXP_EXTRACT'],
  [/bq_initcap/g, 'INITCAP'],
  [/bq_range_bucket/g, 'RANGE_BUCKET'],
  [/count_if/g, 'COUNTIF'],
];

/** Restates a DuckDB error message in BigQuery's words where they differ. */
export function cleanMessage(raw) {
  const m = /^([A-Za-z ]+) Error: ([\s\S]*)$/.exec(raw.trim());
  const kind = m ? m[1] : '';
  let msg = (m ? m[2] : raw).trim();
  const [first, ...rest] = msg.split('\n');
  const hint = rest.find((l) => /^Candidate bindings|^Did you mean/.test(l.trim()));
  let r;
  if ((r = /^Referenced column "?([^"]+?)"? not found in FROM clause!?/.exec(first))) {
    const cand = hint && /"([^"]+)"/.exec(hint)?.[1];
    msg = `Unrecognized name: ${r[1]}${cand ? `; Did you mean ${cand.split('.').pop()}?` : ''}`;
  } else if ((r = /^Referenced table "([^"]+)" not found/.exec(first))) {
    msg = `Unrecognized name: ${r[1]}`;
  } else if ((r = /^column "([^"]+)" must appear in the GROUP BY clause/.exec(first))) {
    msg = `SELECT list expression references column ${r[1]} which is neither grouped nor aggregated`;
  } else if (
    (r = /^Scalar Function with name (\S+) does not exist/.exec(first)) ||
    (r = /^Aggregate Function with name (\S+) does not exist/.exec(first))
  ) {
    msg = `Function not found: ${r[1]}`;
  } else if ((r = /^Table Function with name (\S+) does not exist/.exec(first))) {
    msg = `Table-valued function not found: ${r[1]}`;
  } else if ((r = /^No function matches the given name and argument types '([^(]+)\(([^']*)\)'/.exec(first))) {
    msg = `No matching signature for function ${r[1].toUpperCase()} for argument types: ${r[2]}`;
  } else if ((r = /^syntax error at or near (.+)$/.exec(first))) {
    msg = `Syntax error: Unexpected ${r[1]}`;
  } else if (/^syntax error at end of input/.test(first)) {
    msg = 'Syntax error: Unexpected end of script';
  } else if ((r = /^Could not convert string '(.*)' to (\w+)/.exec(first))) {
    const type = DUCK_TYPES.reduce((acc, [re, to]) => acc.replace(re, to), r[2]);
    msg = `Bad ${type.toLowerCase()} value: ${r[1]}`;
  } else {
    msg = `${kind && kind !== 'Binder' && kind !== 'Parser' && kind !== 'Catalog' ? `${kind}: ` : ''}${first}`;
  }
  for (const [re, to] of [...DUCK_TYPES, ...HELPER_NAMES]) msg = msg.replace(re, to);
  // DuckDB quotes the catalog (the project, always dashed: `"demo-analytics-dev".acme`); BigQuery does not.
  return msg.replace(/"([a-z][a-z0-9]*(?:-[a-z0-9]+)+)"\./g, '$1.').replace(/!$/, '');
}

export { DEMO_ROUTINE };
