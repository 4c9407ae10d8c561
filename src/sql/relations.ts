/**
 * Gate 2b's tree walk: visits the WHOLE parsed statement and resolves every relation it reads.
 *
 * The query skeleton (statement, query, WITH, set operations, SELECT, FROM, joins, table factors) is walked
 * with a typed visitor that knows every field of each node and refuses any field or variant it does not know.
 * Everything else (expressions) is walked generically: each object key must be a known, relation-free node
 * kind or field name (INERT_KEYS), subqueries found anywhere go back to the typed visitor with the scope of
 * CTE names in force there, and function calls are checked by name. A key the walker does not know stops
 * the check (fail closed): a parser upgrade that adds a node kind can only cause rejections, never a skipped
 * table.
 *
 * FROM paths are resolved as BigQuery resolves them: a path of two or more names whose first name is a range
 * variable in scope is an array of that row (`FROM t AS o, o.items`), anything else a CTE or a table held to the
 * allowlist (see Ctx). Pipe steps (`|> ...`) are walked by typed plans like the rest of the skeleton.
 *
 * The AST shape is datafusion-sqlparser-rs's serde output (enum variants as `{ Variant: value }`, struct
 * fields snake_case, absent Options omitted).
 */
import type { SqlPosition } from './prescan';

export interface GuardScope {
  /** The project callers name, the contract's `service-v1` (mapped to the deployment's own by `projectRefs`). */
  project: string;
  /** The brand's dataset; case-sensitive. */
  dataset: string;
}

export type RejectCode = 'INVALID_SQL' | 'FORBIDDEN_TABLE' | 'QUERY_FAILED';

/** Thrown inside the walk to stop at the first problem; guard.ts turns it into a failure result. */
export class Rejection extends Error {
  constructor(
    readonly code: RejectCode,
    message: string,
    readonly position?: SqlPosition,
  ) {
    super(message);
  }
}

type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  // Only plain objects: a Map or class instance could hide children from Object.keys (fail closed).
  if (proto !== Object.prototype && proto !== null) throw new Rejection('QUERY_FAILED', 'unexpected value in the parsed query');
  return true;
}

function asRecord(v: unknown, what: string): Json {
  if (!isRecord(v)) throw unsupported(what);
  return v;
}

function asArray(v: unknown, what: string): unknown[] {
  if (!Array.isArray(v)) throw unsupported(what);
  return v;
}

function unsupported(what: string, position?: SqlPosition): Rejection {
  return new Rejection('QUERY_FAILED', `unsupported SQL construct (${what}); the checker only accepts constructs it knows`, position);
}

/** The single variant of a serde enum value `{ Variant: payload }` (unit variants are plain strings). */
function variant(v: unknown, what: string): [string, unknown] {
  if (typeof v === 'string') return [v, null];
  const r = asRecord(v, what);
  let key: string | undefined;
  let count = 0;
  for (const k in r) {
    key = k;
    if (++count > 1) break;
  }
  if (count !== 1 || key === undefined) throw unsupported(what);
  return [key, r[key]];
}

const isAbsent = (v: unknown) => v === undefined || v === null;
const isEmpty = (v: unknown) => isAbsent(v) || (Array.isArray(v) && v.length === 0) || v === false;

/** Keys of typed nodes that may be present but carry nothing the guard needs (tokens, spans, flags). */
function isInertField(key: string): boolean {
  return key === 'span' || key.endsWith('_token') || TYPE_FIELDS.has(key);
}

/** Fields holding a data type (CAST targets, typed literals, STRUCT<...> fields): types hold no relations. */
const TYPE_FIELDS: ReadonlySet<string> = new Set(['data_type', 'field_type']);

/** A node's whole span as a string key (start and end), or null when it has none. */
function spanKey(v: Json): string | null {
  const span = v['span'];
  if (!isRecord(span)) return null;
  const { start, end } = span;
  if (!isRecord(start) || !isRecord(end)) return null;
  const key = `${String(start['line'])}:${String(start['column'])}-${String(end['line'])}:${String(end['column'])}`;
  return key === '0:0-0:0' ? null : key;
}

function spanStart(v: unknown): SqlPosition | undefined {
  return spanPoint(v, 'start');
}

function spanPoint(v: unknown, which: 'start' | 'end'): SqlPosition | undefined {
  if (!isRecord(v)) return undefined;
  const span = v['span'];
  if (!isRecord(span)) return undefined;
  const point = span[which];
  if (!isRecord(point)) return undefined;
  const { line, column } = point;
  return typeof line === 'number' && typeof column === 'number' && line > 0 ? { line, column } : undefined;
}

/**
 * Where a reference writes the project, as the parser resolved it: the span of its first name (line, and column
 * in code points, in the parser's text), and whether that name was quoted. For a quoted name the span covers the
 * whole quoted token, backticks included; for an unquoted one only its start is reliable (the parser's span of a
 * hyphenated name such as `service-v1` ends early).
 */
export interface ProjectRef {
  start: SqlPosition;
  end: SqlPosition | undefined;
  quoted: boolean;
}

/**
 * CTE names visible at a point of the query, innermost WITH first (BigQuery CTE names are case-insensitive).
 * `names` maps each name of one WITH clause to its position; only positions below `visible` are in scope
 * (a CTE sees the ones before it), so the scopes of a long WITH share one map.
 */
interface CteScope {
  readonly names: ReadonlyMap<string, number>;
  readonly visible: number;
  readonly parent: CteScope | null;
}

function inScope(scope: CteScope | null, name: string): boolean {
  const key = name.toLowerCase();
  for (let s = scope; s; s = s.parent) {
    const at = s.names.get(key);
    if (at !== undefined && at < s.visible) return true;
  }
  return false;
}

/** BigQuery's join kinds as the parser names them (CROSS JOIN and comma joins included). */
const JOIN_KINDS: ReadonlySet<string> = new Set(['Join', 'Inner', 'Left', 'LeftOuter', 'Right', 'RightOuter', 'FullOuter', 'CrossJoin']);

const BUILTIN_NAMESPACES: ReadonlySet<string> = new Set(['NET', 'HLL_COUNT', 'KLL_QUANTILES']);
const DENIED_FUNCTIONS: ReadonlySet<string> = new Set([
  'EXTERNAL_QUERY',
  'APPENDS',
  'CHANGES',
  'VECTOR_SEARCH',
  'GAP_FILL',
  'EXTERNAL_OBJECT_TRANSFORM',
]);
/**
 * Identity and session functions: `SESSION_USER()` returns the email of the service account the warehouse runs
 * as, which is ours, not the brand's. BigQuery has no other, but the parser also reads `CURRENT_USER()`,
 * `USER()` and the like as calls, and refusing them costs nothing.
 */
const IDENTITY_FUNCTIONS: ReadonlySet<string> = new Set(['SESSION_USER', 'CURRENT_USER', 'USER', 'SYSTEM_USER', 'CURRENT_ROLE']);
const DENIED_NAMESPACES: ReadonlySet<string> = new Set(['ML', 'AI', 'OBJ', 'KEYS', 'AEAD']);

/**
 * Keys (enum variants and field names) of expression-level nodes the generic walk may descend into.
 * None of them is a relation: FROM items only occur under the typed visitor, and subqueries only under
 * `Subquery` / `subquery`, which the walk hands back to it.
 */
const INERT_KEYS: ReadonlySet<string> = new Set([
  // Identifiers and literals
  'Identifier',
  'CompoundIdentifier',
  'value',
  'quote_style',
  'Value',
  'Number',
  'SingleQuotedString',
  'DoubleQuotedString',
  'TripleSingleQuotedString',
  'TripleDoubleQuotedString',
  'SingleQuotedRawStringLiteral',
  'DoubleQuotedRawStringLiteral',
  'TripleSingleQuotedRawStringLiteral',
  'TripleDoubleQuotedRawStringLiteral',
  'SingleQuotedByteStringLiteral',
  'DoubleQuotedByteStringLiteral',
  'TripleSingleQuotedByteStringLiteral',
  'TripleDoubleQuotedByteStringLiteral',
  'HexStringLiteral',
  'Boolean',
  'Null',
  'Placeholder',
  'NationalStringLiteral',
  'TypedString',
  'uses_odbc_syntax',
  // Operators and predicates
  'BinaryOp',
  'left',
  'op',
  'right',
  'UnaryOp',
  'expr',
  'Nested',
  'IsNull',
  'IsNotNull',
  'IsTrue',
  'IsNotTrue',
  'IsFalse',
  'IsNotFalse',
  'IsUnknown',
  'IsNotUnknown',
  'IsDistinctFrom',
  'IsNotDistinctFrom',
  'InList',
  'list',
  'negated',
  'InSubquery',
  'InUnnest',
  'array_expr',
  'Between',
  'low',
  'high',
  'Like',
  'ILike',
  'SimilarTo',
  'RLike',
  'pattern',
  'escape_char',
  'any',
  'AnyOp',
  'AllOp',
  'compare_op',
  'is_some',
  'Exists',
  // CASE, casts, special functions
  'Case',
  'operand',
  'conditions',
  'condition',
  'result',
  'else_result',
  'Cast',
  'kind',
  'format',
  'array',
  'Extract',
  'field',
  'syntax',
  'Interval',
  'leading_field',
  'leading_precision',
  'last_field',
  'fractional_seconds_precision',
  'Week',
  'Substring',
  'substring_from',
  'substring_for',
  'special',
  'shorthand',
  'Trim',
  'trim_where',
  'trim_what',
  'trim_characters',
  'Position',
  'in',
  'Ceil',
  'Floor',
  'Overlay',
  'overlay_what',
  'overlay_from',
  'overlay_for',
  'Collate',
  'collation',
  'AtTimeZone',
  'timestamp',
  'time_zone',
  'Convert',
  'is_try',
  'target_before_value',
  'styles',
  'charset',
  // Arrays, structs, tuples, access paths
  'Array',
  'elem',
  'named',
  'Struct',
  'values',
  'fields',
  'Tuple',
  'CompoundFieldAccess',
  'access_chain',
  'root',
  'Subscript',
  'Index',
  'index',
  'Slice',
  'lower_bound',
  'upper_bound',
  'stride',
  'Dot',
  'Named',
  'name',
  'field_name',
  'options',
  'MapAccess',
  'keys',
  'Dictionary',
  'Map',
  'entries',
  'key',
  // Functions, aggregates and windows
  'args',
  'List',
  'Unnamed',
  'Expr',
  'ExprNamed',
  'arg',
  'operator',
  'Equals',
  'RightArrow',
  'Assignment',
  'Wildcard',
  'QualifiedWildcard',
  'clauses',
  'IgnoreOrRespectNulls',
  'Ignore',
  'Respect',
  'OrderBy',
  'Limit',
  'OnOverflow',
  'Having',
  'HavingBound',
  'Separator',
  'duplicate_treatment',
  'Distinct',
  'All',
  'parameters',
  'filter',
  'null_treatment',
  'within_group',
  'over',
  'WindowSpec',
  'NamedWindow',
  'window_name',
  'partition_by',
  'order_by',
  'window_frame',
  'units',
  'start_bound',
  'end_bound',
  'Preceding',
  'Following',
  'options',
  'asc',
  'nulls_first',
  'with_fill',
  'interpolate',
  'Expressions',
  'GroupingSets',
  'Cube',
  'Rollup',
  'modifiers',
  // SELECT list items
  'UnnamedExpr',
  'ExprWithAlias',
  'alias',
  'explicit',
  'columns',
  'opt_ilike',
  'opt_exclude',
  'opt_except',
  'opt_replace',
  'opt_rename',
  'opt_alias',
  'first_element',
  'additional_elements',
  'items',
  'column_name',
  'as_keyword',
  'ObjectName',
  'ident',
  'Multiple',
  'Single',
  // LIMIT / OFFSET / joins' constraints / value-table modes
  'LimitOffset',
  'OffsetCommaLimit',
  'limit',
  'offset',
  'limit_by',
  'rows',
  'On',
  'Using',
  'Natural',
  'None',
  // TABLESAMPLE quantities
  'parenthesized',
  'unit',
  // Pipe SET assignments (`|> SET a = expr`): a column name and an expression
  'target',
  'ColumnName',
]);

/**
 * What is in scope at a point of the query: the CTE names, and the range variables (table aliases) a FROM path
 * may start from. `vars` is always a subset of the names BigQuery has in scope there, compared exactly (BigQuery
 * compares case-insensitively, so an exact match is a match for it too): BigQuery reads a FROM path of two or
 * more names whose first name is in scope as an array of that row, before it looks for a table (ZetaSQL's
 * `ShouldResolveAsArrayScan`). A name we leave out only makes us check a path as a table, and refuse it; a name
 * BigQuery does not have would let a table through unchecked, so only names certainly in scope are added.
 */
interface Ctx {
  readonly ctes: CteScope | null;
  readonly vars: Vars;
}

/**
 * Range variables in scope: the first `visible` names of a frame (one FROM clause's, in order) and, through the
 * frame's parent, the outer queries'. Frames only grow, so a view taken earlier stays what it was; a lookup
 * costs one map read per enclosing query, however long the FROM clause.
 */
type Vars = { readonly frame: Frame; readonly visible: number } | null;

interface Frame {
  /** Each name's first position in the frame. */
  readonly index: Map<string, number>;
  readonly names: string[];
  readonly parent: Vars;
}

const newFrame = (parent: Vars): Frame => ({ index: new Map(), names: [], parent });

const viewOf = (frame: Frame): Vars => ({ frame, visible: frame.names.length });

function addVar(frame: Frame, name: string | null): void {
  if (name === null) return;
  if (!frame.index.has(name)) frame.index.set(name, frame.names.length);
  frame.names.push(name);
}

function hasVar(vars: Vars, name: string): boolean {
  for (let v = vars; v; v = v.frame.parent) {
    const at = v.frame.index.get(name);
    if (at !== undefined && at < v.visible) return true;
  }
  return false;
}

const withVars = (ctx: Ctx, vars: Vars): Ctx => (vars === ctx.vars ? ctx : { ctes: ctx.ctes, vars });

/** Join kinds that hide the left side's names from the right side (BigQuery resolves their right side alone). */
const OUTER_RIGHT_JOINS: ReadonlySet<string> = new Set(['Right', 'RightOuter', 'FullOuter']);

/** How the typed visitor walks each field of a node; a field missing from the plan is refused. */
type FieldPlan = Readonly<Record<string, 'query' | 'queries' | 'expr' | 'table' | 'skip'>>;

/** FROM items other than named tables and parenthesized joins, which resolve names and need their own code. */
const FROM_ITEM_PLANS = {
  Derived: { subquery: 'query', alias: 'skip', lateral: 'skip' },
  UNNEST: { array_exprs: 'expr', alias: 'skip', with_offset: 'skip', with_offset_alias: 'skip', with_ordinality: 'skip' },
  Pivot: {
    table: 'table',
    aggregate_functions: 'expr',
    value_column: 'expr',
    value_source: 'expr',
    default_on_null: 'expr',
    alias: 'skip',
  },
  Unpivot: { table: 'table', value: 'expr', name: 'skip', columns: 'expr', null_inclusion: 'skip', alias: 'skip' },
} satisfies Record<string, FieldPlan>;

const TABLESAMPLE_PLAN: FieldPlan = { modifier: 'skip', name: 'skip', quantity: 'expr' };

/**
 * Pipe operators (`|> WHERE ...`) the parser reads; any other is refused. JOIN and CALL are walked apart: JOIN
 * resolves a table like FROM does, and CALL is a table-valued function, refused like one in FROM.
 */
const PIPE_PLANS: Readonly<Record<string, FieldPlan>> = {
  Select: { exprs: 'expr' },
  Extend: { exprs: 'expr' },
  Set: { assignments: 'expr' },
  Drop: { columns: 'expr' },
  Rename: { mappings: 'expr' },
  As: { alias: 'expr' },
  Where: { expr: 'expr' },
  Limit: { expr: 'expr', offset: 'expr' },
  Aggregate: { full_table_exprs: 'expr', group_by_expr: 'expr' },
  OrderBy: { exprs: 'expr' },
  TableSample: { sample: 'skip' }, // walked with TABLESAMPLE_PLAN below
  Union: { set_quantifier: 'skip', queries: 'queries' },
  Intersect: { set_quantifier: 'skip', queries: 'queries' },
  Except: { set_quantifier: 'skip', queries: 'queries' },
  Pivot: { aggregate_functions: 'expr', value_column: 'expr', value_source: 'expr', default_on_null: 'expr', alias: 'skip' },
  Unpivot: { value_column: 'expr', name_column: 'expr', unpivot_columns: 'expr', alias: 'skip' },
};

/** The name an alias gives (`AS x`), or null. */
function aliasName(alias: unknown): string | null {
  if (!isRecord(alias)) return null;
  const name = alias['name'];
  if (!isRecord(name)) return null;
  const value = name['value'];
  return typeof value === 'string' ? value : null;
}

/**
 * Walks a parsed statement list. Returns the tables read, as canonical `project.dataset.table` names (or
 * `project.dataset.INFORMATION_SCHEMA.COLUMNS`), unique, in order of first use. Throws Rejection.
 *
 * When `projectRefs` is given, the first name of every table and routine reference (the one that names
 * `scope.project`) is pushed to it, in the parser's text: the places where the project is written.
 */
export function resolveRelations(statements: unknown[], scope: GuardScope, projectRefs?: ProjectRef[]): string[] {
  if (statements.length === 0) throw new Rejection('QUERY_FAILED', 'empty query: send a single SELECT or WITH statement');
  if (statements.length > 1) {
    throw new Rejection('INVALID_SQL', 'multiple statements: only a single SELECT or WITH statement is allowed');
  }
  const walker = new Walker(scope, projectRefs ?? null);
  const [kind, body] = variant(statements[0], 'statement');
  if (kind !== 'Query') {
    throw new Rejection('INVALID_SQL', `only a single SELECT or WITH statement is allowed (got ${kind})`);
  }
  walker.query(body, { ctes: null, vars: null });
  return [...walker.tables];
}

class Walker {
  readonly tables = new Set<string>();

  constructor(
    private readonly target: GuardScope,
    private readonly projectRefs: ProjectRef[] | null,
  ) {}

  /** Records where a reference names the project; one whose place is unknown cannot be mapped, so it is refused. */
  private projectRef(first: Json | undefined, shown: string): void {
    if (this.projectRefs === null) return;
    const start = spanStart(first);
    if (!first || !start) throw new Rejection('QUERY_FAILED', `${shown}: the checker cannot tell where this name is written`);
    this.projectRefs.push({ start, end: spanPoint(first, 'end'), quoted: first['quote_style'] === '`' });
  }

  query(node: unknown, ctx: Ctx): void {
    const q = asRecord(node, 'query');
    let inner = ctx;
    for (const key in q) {
      const v = q[key];
      if (isAbsent(v) || isInertField(key)) continue;
      switch (key) {
        case 'with':
          inner = { ctes: this.with(v, ctx.ctes), vars: ctx.vars };
          break;
        case 'body':
        case 'order_by':
        case 'limit_clause':
        case 'fetch':
        case 'pipe_operators':
          break; // walked below, with the WITH scope
        case 'locks':
        case 'settings':
          if (!isEmpty(v)) throw unsupported(key);
          break;
        case 'for_clause':
        case 'format_clause':
          throw unsupported(key);
        default:
          throw unsupported(`query field ${key}`);
      }
    }
    this.setExpr(q['body'], inner);
    // ORDER BY and LIMIT after the body, and the pipe steps: the body's own FROM names are not assumed visible.
    for (const key of ['order_by', 'limit_clause', 'fetch']) {
      if (!isAbsent(q[key])) this.expr(q[key], inner);
    }
    if (!isAbsent(q['pipe_operators'])) {
      for (const op of asArray(q['pipe_operators'], 'pipe syntax')) this.pipeOperator(op, inner);
    }
  }

  private with(node: unknown, outer: CteScope | null): CteScope {
    const w = asRecord(node, 'WITH');
    for (const key in w) {
      if (key !== 'recursive' && key !== 'cte_tables' && !isInertField(key)) throw unsupported(`WITH field ${key}`);
    }
    const ctes = asArray(w['cte_tables'], 'WITH');
    const names = ctes.map((c) => {
      const cte = asRecord(c, 'CTE');
      const alias = asRecord(cte['alias'], 'CTE name');
      const name = asRecord(alias['name'], 'CTE name')['value'];
      if (typeof name !== 'string') throw unsupported('CTE name');
      return name.toLowerCase();
    });
    const recursive = w['recursive'] === true;
    const positions = new Map<string, number>();
    names.forEach((name, i) => {
      if (!positions.has(name)) positions.set(name, i);
    });
    const all: CteScope = { names: positions, visible: names.length, parent: outer };
    ctes.forEach((c, i) => {
      const cte = asRecord(c, 'CTE');
      for (const key in cte) {
        const v = cte[key];
        if (isAbsent(v) || isInertField(key)) continue;
        if (key === 'from' || key === 'materialized') throw unsupported(`CTE ${key}`);
        if (key !== 'alias' && key !== 'query') throw unsupported(`CTE field ${key}`);
      }
      // A CTE sees the ones before it; WITH RECURSIVE lets each see all of them, itself included. Its body sees
      // no range variable of the query around it (BigQuery resolves it in an empty name scope).
      const visible: CteScope = recursive ? all : { names: positions, visible: i, parent: outer };
      this.query(cte['query'], { ctes: visible, vars: null });
    });
    return all;
  }

  private setExpr(node: unknown, ctx: Ctx): void {
    const [kind, body] = variant(node, 'query body');
    switch (kind) {
      case 'Select':
        return this.select(body, ctx);
      case 'Query':
        return this.query(body, ctx);
      case 'SetOperation': {
        const op = asRecord(body, 'set operation');
        for (const key in op) {
          if (!['op', 'set_quantifier', 'left', 'right'].includes(key)) throw unsupported(`set operation field ${key}`);
        }
        this.setExpr(op['left'], ctx);
        this.setExpr(op['right'], ctx);
        return;
      }
      case 'Insert':
      case 'Update':
      case 'Delete':
      case 'Merge':
        throw new Rejection('INVALID_SQL', `only a single SELECT or WITH statement is allowed (got ${kind.toUpperCase()})`);
      default:
        throw unsupported(kind === 'Values' ? 'VALUES' : kind === 'Table' ? 'TABLE statement' : `query body ${kind}`);
    }
  }

  private select(node: unknown, ctx: Ctx): void {
    const s = asRecord(node, 'SELECT');
    // FROM first: its range variables are in scope for every other clause (and subqueries in them).
    let inner = ctx;
    if (!isAbsent(s['from'])) {
      const frame = newFrame(ctx.vars);
      for (const twj of asArray(s['from'], 'FROM')) this.tableWithJoins(twj, ctx, frame);
      inner = withVars(ctx, viewOf(frame));
    }
    for (const key in s) {
      const v = s[key];
      if (isAbsent(v) || isInertField(key)) continue;
      switch (key) {
        case 'from':
          break;
        case 'distinct':
        case 'projection':
        case 'exclude':
        case 'selection':
        case 'group_by':
        case 'having':
        case 'named_window':
        case 'qualify':
          this.expr(v, inner);
          break;
        case 'top_before_distinct':
        case 'window_before_qualify':
        case 'value_table_mode':
          break;
        case 'flavor':
          if (v !== 'Standard') throw unsupported('FROM-first SELECT');
          break;
        case 'into':
          throw new Rejection('INVALID_SQL', 'SELECT INTO is not allowed: queries are read-only');
        case 'optimizer_hints':
        case 'lateral_views':
        case 'connect_by':
        case 'cluster_by':
        case 'distribute_by':
        case 'sort_by':
          if (!isEmpty(v)) throw unsupported(key.replace(/_/g, ' '));
          break;
        default:
          throw unsupported(`SELECT field ${key}`);
      }
    }
  }

  /**
   * One comma-separated FROM item and its joins. `frame` holds the range variables of the FROM clause so far
   * (on top of the outer queries'); the names this item adds are appended to it.
   */
  private tableWithJoins(node: unknown, ctx: Ctx, frame: Frame): void {
    const twj = asRecord(node, 'FROM item');
    for (const key in twj) {
      if (key !== 'relation' && key !== 'joins') throw unsupported(`FROM field ${key}`);
    }
    this.tableFactor(twj['relation'], ctx, frame, viewOf(frame));
    for (const j of asArray(twj['joins'] ?? [], 'JOIN')) this.join(j, ctx, frame);
  }

  /** A JOIN of what `frame` holds with its right side, whose names are appended to `frame`. */
  private join(node: unknown, ctx: Ctx, frame: Frame): void {
    const join = asRecord(node, 'JOIN');
    for (const key in join) {
      const v = join[key];
      if (key !== 'relation' && key !== 'join_operator' && (key !== 'global' || v !== false)) throw unsupported(`JOIN field ${key}`);
    }
    const [kind, constraint] = variant(join['join_operator'], 'JOIN');
    if (!JOIN_KINDS.has(kind)) throw unsupported(`${kind} join`);
    // The right side of a RIGHT or FULL join sees only the query's outer names; the others see the left side too.
    this.tableFactor(join['relation'], ctx, frame, OUTER_RIGHT_JOINS.has(kind) ? ctx.vars : viewOf(frame));
    this.expr(constraint, withVars(ctx, viewOf(frame))); // ON <expr> / USING (...)
  }

  /**
   * One FROM item. `local` holds the range variables a path in it may start from; the names the item adds (its
   * alias, explicit or implicit) are appended to `frame`.
   */
  private tableFactor(node: unknown, ctx: Ctx, frame: Frame, local: Vars): void {
    const [kind, body] = variant(node, 'FROM item');
    const f = asRecord(body, kind);
    switch (kind) {
      case 'Table':
        return addVar(frame, this.table(f, ctx, local));
      case 'Derived':
        // A subquery in FROM sees the query's outer names, not the items beside it (BigQuery has no LATERAL).
        this.fields(f, kind, FROM_ITEM_PLANS.Derived, ctx);
        return addVar(frame, aliasName(f['alias']));
      case 'UNNEST':
        this.fields(f, kind, FROM_ITEM_PLANS.UNNEST, withVars(ctx, local));
        return addVar(frame, aliasName(f['alias']));
      case 'NestedJoin': {
        this.fields(f, kind, { table_with_joins: 'skip', alias: 'skip' }, ctx);
        // A parenthesized join starts from the outer names; the names inside stay visible after it.
        const inner = newFrame(ctx.vars);
        this.tableWithJoins(f['table_with_joins'], ctx, inner);
        if (isAbsent(f['alias'])) for (const name of inner.names) addVar(frame, name);
        return;
      }
      case 'Pivot':
      case 'Unpivot': {
        const plan = kind === 'Pivot' ? FROM_ITEM_PLANS.Pivot : FROM_ITEM_PLANS.Unpivot;
        // Walked with the outer names only (BigQuery refuses PIVOT on an array path); its input's names do not
        // survive it, only its own alias does.
        this.fields(f, kind, plan, ctx);
        return addVar(frame, aliasName(f['alias']));
      }
      case 'TableFunction':
      case 'Function':
        throw new Rejection('FORBIDDEN_TABLE', 'table-valued functions are not allowed');
      default:
        throw unsupported(`FROM item ${kind}`);
    }
  }

  /** A named FROM item: an array path of a range variable, a CTE, or a table. Returns the name it adds. */
  private table(f: Json, ctx: Ctx, local: Vars): string | null {
    for (const key in f) {
      const v = f[key];
      if (isAbsent(v) || isInertField(key)) continue;
      switch (key) {
        case 'name':
        case 'alias':
          break;
        case 'args': {
          const { parts, position } = this.nameParts(f['name']);
          throw new Rejection('FORBIDDEN_TABLE', `table-valued functions are not allowed (${parts.join('.')})`, position);
        }
        case 'version':
          // FOR SYSTEM_TIME AS OF on a table of the brand's dataset reads that table's own history: allowed.
          this.tableVersion(v, ctx);
          break;
        case 'sample':
          this.tableSample(v, ctx);
          break;
        case 'with_hints':
        case 'partitions':
        case 'index_hints':
        case 'with_ordinality':
        case 'json_path':
          if (!isEmpty(v)) throw unsupported(key.replace(/_/g, ' '));
          break;
        default:
          throw unsupported(`table field ${key}`);
      }
    }
    const { idents } = this.nameParts(f['name']);
    const explicit = aliasName(f['alias']);
    const last = idents?.[idents.length - 1] ?? '';
    // The implicit alias is the path's last name; a quoted name holding dots is left out (BigQuery may read it
    // as one name or several), which only makes a later path from it checked as a table.
    const implicit = last === '' || last.includes('.') ? null : last;
    if (idents && isArrayPath(idents, local, this.target.project)) return explicit ?? implicit; // an array of a row in scope, not a table
    this.tableName(f['name'], ctx.ctes);
    return explicit ?? implicit;
  }

  /** One `|>` step; its tables are held to the same rules as FROM's. */
  private pipeOperator(node: unknown, ctx: Ctx): void {
    const [kind, body] = variant(node, 'pipe operator');
    const f = asRecord(body, `pipe operator ${kind}`);
    if (kind === 'Join') {
      this.join(f, ctx, newFrame(ctx.vars));
      return;
    }
    if (kind === 'Call') {
      const fn = asRecord(f['function'], 'pipe CALL');
      const { parts, position } = this.nameParts(fn['name']);
      throw new Rejection('FORBIDDEN_TABLE', `table-valued functions are not allowed (|> CALL ${parts.join('.')})`, position);
    }
    const plan = Object.hasOwn(PIPE_PLANS, kind) ? PIPE_PLANS[kind] : undefined;
    if (!plan) throw unsupported(`pipe operator ${kind}`);
    this.fields(f, `pipe operator ${kind}`, plan, ctx);
    if (kind === 'TableSample') this.fields(asRecord(f['sample'], 'TABLESAMPLE'), 'TABLESAMPLE', TABLESAMPLE_PLAN, ctx);
  }

  /** Walks a node's fields by a declared plan; any field not in the plan is refused. */
  private fields(f: Json, kind: string, plan: FieldPlan, ctx: Ctx): void {
    for (const key in f) {
      const v = f[key];
      if (isAbsent(v) || isInertField(key)) continue;
      const how = Object.hasOwn(plan, key) ? plan[key] : undefined;
      if (how === undefined) throw unsupported(`${kind} field ${key}`);
      if (how === 'query') this.query(v, ctx);
      else if (how === 'queries') for (const q of asArray(v, kind)) this.query(q, ctx);
      else if (how === 'expr') this.expr(v, ctx);
      else if (how === 'table') this.tableFactor(v, ctx, newFrame(ctx.vars), ctx.vars); // a PIVOT's input: its names end there
    }
  }

  private tableSample(node: unknown, ctx: Ctx): void {
    const [kind, sample] = variant(node, 'TABLESAMPLE');
    if (kind !== 'BeforeTableAlias' && kind !== 'AfterTableAlias') throw unsupported(`TABLESAMPLE ${kind}`);
    this.fields(asRecord(sample, 'TABLESAMPLE'), 'TABLESAMPLE', TABLESAMPLE_PLAN, ctx);
  }

  private tableVersion(node: unknown, ctx: Ctx): void {
    const [kind, body] = variant(node, 'table version');
    if (kind !== 'ForSystemTimeAsOf') throw unsupported(`table version ${kind}`);
    this.expr(body, ctx);
  }

  /**
   * Name parts as BigQuery reads a table path: a quoted part holding dots is several parts. `idents` are the
   * names as written, a quoted name holding dots being one (`` `a.b`.c `` is `a.b` and `c`): the parser splits
   * such a name into parts that share the quoted token's span, which is how they are told apart here. Null when
   * a part has no span (then nothing can be said about how the names were written).
   */
  private nameParts(node: unknown): { parts: string[]; idents: string[] | null; position?: SqlPosition; first?: Json } {
    const parts: string[] = [];
    let idents: string[] | null = [];
    let position: SqlPosition | undefined;
    let first: Json | undefined;
    let lastSpan = '';
    for (const p of asArray(node, 'name')) {
      const [kind, ident] = variant(p, 'name part');
      if (kind !== 'Identifier') throw unsupported(`name part ${kind}`);
      const id = asRecord(ident, 'identifier');
      const value = id['value'];
      if (typeof value !== 'string') throw unsupported('identifier');
      position ??= spanStart(id);
      first ??= id;
      parts.push(...value.split('.'));
      const span = spanKey(id);
      if (idents === null || span === null) idents = null;
      else if (span === lastSpan && idents.length > 0) idents[idents.length - 1] += `.${value}`;
      else idents.push(value);
      lastSpan = span ?? '';
    }
    return { parts, idents, position, first };
  }

  private tableName(node: unknown, ctes: CteScope | null): void {
    const { parts, position, first } = this.nameParts(node);
    const { project, dataset } = this.target;
    const shown = `\`${parts.join('.')}\``;
    const forbidden = (why: string) => new Rejection('FORBIDDEN_TABLE', `${shown}: ${why}`, position);
    if (parts.length === 1 && parts[0] !== undefined && inScope(ctes, parts[0])) return; // a CTE, not a table
    if (parts.some((p) => p.length === 0)) throw forbidden('empty name part');
    if (parts.length < 3) {
      throw forbidden(`tables must be fully qualified as \`${project}.${dataset}.<table>\``);
    }
    if (parts[0] !== project) throw forbidden(`only project ${project} can be queried`);
    if (parts[1] !== dataset) throw forbidden(`only dataset ${dataset} is accessible to this brand`);
    this.projectRef(first, shown);
    const table = parts[2] ?? '';
    if (parts.length === 3) {
      if (table.toUpperCase() === 'INFORMATION_SCHEMA') throw forbidden('use INFORMATION_SCHEMA.COLUMNS');
      this.tables.add(`${project}.${dataset}.${table}`);
      return;
    }
    if (parts.length === 4 && table.toUpperCase() === 'INFORMATION_SCHEMA' && parts[3]?.toUpperCase() === 'COLUMNS') {
      this.tables.add(`${project}.${dataset}.INFORMATION_SCHEMA.COLUMNS`);
      return;
    }
    throw forbidden('only tables of the dataset and its INFORMATION_SCHEMA.COLUMNS view can be queried');
  }

  private functionCall(fn: Json, ctx: Ctx): void {
    const { parts, position, first } = this.nameParts(fn['name']);
    const upper = parts.map((p) => p.toUpperCase());
    const safe = upper.length > 1 && upper[0] === 'SAFE';
    const core = safe ? upper.slice(1) : upper;
    const forbidden = (why: string) => new Rejection('FORBIDDEN_TABLE', `${parts.join('.')}: ${why}`, position);
    const { project, dataset } = this.target;
    if (core.length === 1) {
      if (DENIED_FUNCTIONS.has(core[0] ?? '')) throw forbidden('reads data outside the dataset and is not allowed');
      if (IDENTITY_FUNCTIONS.has(core[0] ?? '')) {
        throw new Rejection(
          'INVALID_SQL',
          `${parts.join('.')}() is not allowed: ` +
            "identity and session functions describe the warehouse's service account, not the brand's data",
          position,
        );
      }
    } else if (core.length === 2 && DENIED_NAMESPACES.has(core[0] ?? '')) {
      throw forbidden(`${core[0]}.* functions are not allowed`);
    } else if (core.length === 2 && BUILTIN_NAMESPACES.has(core[0] ?? '')) {
      // a built-in function namespace such as NET.HOST
    } else if (safe || parts.length !== 3 || parts[0] !== project || parts[1] !== dataset) {
      throw forbidden(`routines outside the dataset are not allowed; call them as \`${project}.${dataset}.<routine>\``);
    } else {
      this.projectRef(first, parts.join('.'));
    }
    for (const key in fn) {
      const v = fn[key];
      if (key !== 'name' && !isInertField(key)) this.expr(v, ctx);
    }
  }

  /** Generic walk of an expression-level subtree (see INERT_KEYS). */
  expr(node: unknown, ctx: Ctx): void {
    if (Array.isArray(node)) {
      for (const item of node) this.expr(item, ctx);
      return;
    }
    if (!isRecord(node)) return; // strings, numbers, booleans, null
    // for-in over these plain objects: the hot loop of the guard. (An enumerable key inherited from a
    // polluted prototype would show up here too and be refused as unknown.)
    for (const key in node) {
      if (isInertField(key)) continue;
      const v = node[key];
      if (key === 'Subquery' || key === 'subquery') {
        this.query(v, ctx);
      } else if (key === 'Function') {
        this.functionCall(asRecord(v, 'function call'), ctx);
      } else if (INERT_KEYS.has(key)) {
        this.expr(v, ctx);
      } else {
        throw unsupported(key, spanStart(v));
      }
    }
  }
}

/**
 * Whether BigQuery reads a FROM path as an array of a row in scope rather than a table: two or more names, the
 * first a range variable in `vars`. A name holding a dot is never taken for one (BigQuery may split it), and
 * neither is an alias spelt like the project: such a path is checked as the table it would otherwise name.
 */
function isArrayPath(idents: readonly string[], vars: Vars, project: string): boolean {
  if (idents.length < 2 || vars === null) return false;
  const first = idents[0] ?? '';
  return first !== project && hasVar(vars, first) && idents.every((p) => p.length > 0 && !p.includes('.'));
}
