// The admin CLI's console commands: the data-issue inbox (`feedback list|show|resolve`) and the query history
// (`history list|totals`). They build their SQL with the Worker's own modules (src/features/feedback-inbox,
// src/features/query-history), so the CLI and the admin pages show the same rows under the same visibility rule.
//
// Who sees what: without --as, the operator view (every org: whoever runs this holds the database anyway); with
// --as USER_ID|EMAIL, exactly what that administrator sees on the pages (an org administrator the org's brands and
// its organization-wide rows, a brand administrator that brand, anyone else nothing).
import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { importWorkerModules, ROOT } from './import-ts.mjs';

/** The Worker modules these commands use, bundled once per process. */
let modules;
async function load() {
  modules ??= await importWorkerModules({
    'src/features/feedback-inbox/inbox.ts': [
      'listFeedbackStatement',
      'feedbackDetailStatements',
      'changeStatusStatements',
      'statusChangeProblem',
      'toFeedbackItem',
      'toStatusChange',
      'toDelivery',
      'parseInboxFilter',
      'FEEDBACK_STATUSES',
    ],
    'src/features/query-history/history.ts': [
      'listRunsStatement',
      'totalsStatements',
      'toRun',
      'toTotalsRow',
      'parseHistoryFilter',
      'nextCursor',
      'csvHeader',
      'csvRow',
      'formatUsd',
      'callerText',
    ],
    'src/features/memories/store.ts': ['inlineStatement'],
    'src/auth/oauth-principal.ts': ['adminReachStatement', 'adminReachFromRow'],
    'src/auth/ownership.ts': ['visibilityOf'],
    'src/lib/ids.ts': ['newId'],
  });
  return modules;
}

const SCOPE_OPTIONS = { as: { type: 'string' } };

/** `text` on one line, at most `max` characters (a cut one ends with …). */
function oneLine(/** @type {string} */ text, /** @type {number} */ max) {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
const AS_HELP = `  --as USER_ID|EMAIL  show what that administrator sees (default: every organization)`;

/**
 * @param {{ UsageError: new (m: string) => Error, CommandError: new (m: string) => Error, iso: (ms: unknown) => string | null,
 *   table: (rows: Record<string, unknown>[], cols: string[]) => string, sql: (s: TemplateStringsArray, ...v: unknown[]) => string,
 *   sqlLiteral: (v: string | number | null) => string }} h the CLI's helpers
 */
export function consoleCommands({ UsageError, CommandError, iso, table, sql, sqlLiteral }) {
  /** The visibility of --as (or the operator's): the pages' own reach read and rule (src/auth/ownership.ts). */
  async function visibility(o, io) {
    if (o.as === undefined) return { orgIds: [], brandIds: [], all: true, label: 'every organization' };
    const m = await load();
    const [row] = await io.exec(m.inlineStatement(m.adminReachStatement(o.as, true), sqlLiteral));
    if (!row) throw new CommandError(`no user ${o.as}`);
    const reach = m.adminReachFromRow(row);
    return { ...m.visibilityOf(reach), label: reach.email, email: reach.email };
  }

  async function run(io, m, statement) {
    return io.exec(m.inlineStatement(statement, sqlLiteral));
  }

  function filterFrom(o, parse, names) {
    const raw = Object.fromEntries(names.map((n) => [n, o[n]]).filter(([, v]) => typeof v === 'string'));
    const parsed = parse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new UsageError(`--${String(issue?.path[0] ?? '')}: ${issue?.message ?? 'invalid'}`);
    }
    return parsed.data;
  }

  function limitOf(o, fallback) {
    if (o.limit === undefined) return fallback;
    const n = Number(o.limit);
    if (!Number.isSafeInteger(n) || n < 1 || n > 10_000) throw new UsageError('--limit must be a whole number from 1 to 10000');
    return n;
  }

  const INBOX_FILTERS = ['brand', 'severity', 'status', 'key', 'connection', 'user', 'from', 'to'];
  const HISTORY_FILTERS = ['brand', 'key', 'connection', 'user', 'outcome', 'query', 'from', 'to'];
  const text = (n) => Object.fromEntries(n.map((k) => [k, { type: 'string' }]));

  const filer = (m, f) => m.callerText(f.filer, f.user);

  async function detail(io, m, v, id) {
    const [one, changes, deliveries] = m.feedbackDetailStatements(v, id);
    const [row] = await run(io, m, one);
    if (!row) throw new CommandError(`no report ${id}${v.all ? '' : ` visible to ${v.label}`}`);
    const item = m.toFeedbackItem(row);
    return {
      ...item,
      createdAt: iso(item.createdAt),
      statusChangedAt: iso(item.statusChangedAt),
      history: (await run(io, m, changes)).map((r) => {
        const c = m.toStatusChange(r);
        return { ...c, at: iso(c.at) };
      }),
      deliveries: (await run(io, m, deliveries)).map((r) => {
        const d = m.toDelivery(r);
        return { ...d, at: iso(d.at) };
      }),
    };
  }

  return {
    'feedback list': {
      usage:
        'feedback list [--as USER] [--brand B] [--severity low|medium|high] [--status S] [--key KEY_ID] [--connection GRANT_ID] [--user USER_ID] [--from DATE] [--to DATE] [--limit N]',
      summary: "list data-issue reports, newest first (the admin pages' inbox)",
      details: `${AS_HELP}
  --status    open, acknowledged, resolved or dismissed
  --from/--to first and last day (UTC, YYYY-MM-DD)
  --limit     at most N reports (default 100)`,
      options: { ...SCOPE_OPTIONS, ...text(INBOX_FILTERS), limit: { type: 'string' } },
      async run(o, _p, io) {
        const m = await load();
        const v = await visibility(o, io);
        const filter = filterFrom(o, m.parseInboxFilter, INBOX_FILTERS);
        const limit = limitOf(o, 100);
        const rows = await run(io, m, m.listFeedbackStatement(v, filter, limit + 1));
        const items = rows.slice(0, limit).map((r) => m.toFeedbackItem(r));
        const reports = items.map((f) => ({
          id: f.id,
          createdAt: iso(f.createdAt),
          brandId: f.brand?.id ?? null,
          severity: f.severity,
          status: f.status,
          filer: f.filer,
          user: f.user,
          summary: f.summary,
        }));
        const display = reports.map((r, i) => ({
          ...r,
          brand: r.brandId ?? 'org-wide',
          filed_by: filer(m, items[i]),
          severity: r.severity ?? '-',
        }));
        const more = rows.length > limit ? `\n(more than ${limit}: narrow the filters or raise --limit)` : '';
        return {
          text: table(display, ['id', 'createdAt', 'brand', 'severity', 'status', 'filed_by', 'summary']) + more,
          json: { reports, more: rows.length > limit },
        };
      },
    },
    'feedback show': {
      usage: 'feedback show REPORT_ID [--as USER]',
      summary: 'one data-issue report: what was filed, the transcript, the attached queries, its status history and webhook deliveries',
      details: AS_HELP,
      options: { ...SCOPE_OPTIONS },
      positional: 'REPORT_ID',
      async run(o, p, io) {
        const id = p[0];
        if (!id) throw new UsageError('give the report id (fb_..., see `feedback list`)');
        const m = await load();
        const d = await detail(io, m, await visibility(o, io), id);
        const lines = [
          `${d.id}  ${d.status}${d.statusChangedBy ? ` (by ${d.statusChangedBy}, ${d.statusChangedAt})` : ''}`,
          `summary:   ${d.summary}`,
          `brand:     ${d.brand ? d.brand.id : 'organization-wide'}   severity: ${d.severity ?? '-'}   filed: ${d.createdAt} by ${filer(m, d)}`,
          `expected:  ${d.expected ?? '-'}`,
          `observed:  ${d.observed ?? '-'}`,
          ...(d.statusNote ? [`note:      ${d.statusNote}`] : []),
          '',
          `transcript (${d.transcript.length} turns):`,
          ...d.transcript.map((t) => `  ${t.role}: ${t.content}`),
          '',
          `attached queries (${d.recentQueries.length}):`,
          ...d.recentQueries.map(
            (q) =>
              `  ${iso(q.createdAt)}  ${q.outcome}  ${q.bytesBilled ?? '-'} bytes billed  request ${q.requestId}\n    ${(q.sql ?? '').replace(/\n/g, '\n    ')}`,
          ),
          '',
          'status history:',
          ...(d.history.length
            ? d.history.map((c) => `  ${c.at}  ${c.from} -> ${c.to}  by ${c.actorName}${c.note ? `: ${c.note}` : ''}`)
            : ['  (none)']),
          'webhook deliveries:',
          ...(d.deliveries.length
            ? d.deliveries.map(
                (x) =>
                  `  attempt ${x.attempt}  ${x.at}  ${x.outcome}${x.httpStatus !== null ? ` HTTP ${x.httpStatus}` : ''}${x.error ? ` (${x.error})` : ''}`,
              )
            : ['  (none)']),
        ];
        return { text: lines.join('\n'), json: d };
      },
    },
    'feedback resolve': {
      usage: 'feedback resolve REPORT_ID --note TEXT [--status resolved|dismissed|acknowledged|open] [--as USER] [--author NAME]',
      summary: "change a report's status (default resolved) with a note; recorded with who changed it",
      details: `${AS_HELP}
  --status  acknowledged, resolved (default), dismissed, or open to reopen a resolved or dismissed report; all but
            acknowledged need a note (the CLI sends no webhook event: the pages do)
  --author  display name recorded as who changed it (default: the --as user, else admin CLI and your OS user name)`,
      options: { ...SCOPE_OPTIONS, note: { type: 'string' }, status: { type: 'string' }, author: { type: 'string' } },
      positional: 'REPORT_ID',
      async run(o, p, io) {
        const id = p[0];
        if (!id) throw new UsageError('give the report id (fb_..., see `feedback list`)');
        const m = await load();
        const to = o.status ?? 'resolved';
        if (!m.FEEDBACK_STATUSES.includes(to)) throw new UsageError('--status must be acknowledged, resolved, dismissed or open');
        const v = await visibility(o, io);
        const before = await detail(io, m, v, id);
        const note = typeof o.note === 'string' && o.note.trim() !== '' ? o.note.trim() : null;
        const problem = m.statusChangeProblem(before.status, to, note);
        if (problem) throw new CommandError(problem);
        let osUser = '';
        try {
          osUser = ` (${userInfo().username})`;
        } catch {
          // No passwd entry (some containers).
        }
        const name = o.author ?? (v.email ? `${v.email} via admin CLI` : `admin CLI${osUser}`);
        const changeId = m.newId('fsc');
        const statements = m.changeStatusStatements(v, {
          id,
          changeId,
          from: before.status,
          to,
          note,
          actor: { kind: 'cli', id: null, name },
          now: io.now,
        });
        await io.exec(statements.map((s) => m.inlineStatement(s, sqlLiteral)).join(';\n'), {}, { all: true });
        const [applied] = await io.exec(sql`SELECT id FROM feedback_status_changes WHERE id = ${changeId}`);
        if (!applied) throw new CommandError(`report ${id} changed while this ran (it is no longer ${before.status}); nothing was changed`);
        return { text: `report ${id}: ${before.status} -> ${to}`, json: { id, from: before.status, to, note, by: name } };
      },
    },
    'history list': {
      usage:
        'history list [--as USER] [--brand B] [--key KEY_ID] [--connection GRANT_ID] [--user USER_ID] [--outcome ok|error|CODE] [--query QUERY_ID] [--from DATE] [--to DATE] [--limit N] [--csv]',
      summary: 'list query runs, newest first, with outcome, bytes billed, duration and estimated cost',
      details: `${AS_HELP}
  --outcome  ok, error (every refusal or failure) or one error code
  --limit    at most N runs (default 100; with --csv every matching run)
  --csv      the admin pages' CSV export instead of a table`,
      options: { ...SCOPE_OPTIONS, ...text(HISTORY_FILTERS), limit: { type: 'string' }, csv: { type: 'boolean', default: false } },
      async run(o, _p, io) {
        const m = await load();
        const v = await visibility(o, io);
        let filter = filterFrom(o, m.parseHistoryFilter, HISTORY_FILTERS);
        const price = await pricePerTib();
        if (o.csv) {
          let out = m.csvHeader();
          for (;;) {
            const rows = (await run(io, m, m.listRunsStatement(v, filter, 1001))).map((r) => m.toRun(r, price));
            for (const r of rows.slice(0, 1000)) out += m.csvRow(r);
            const next = m.nextCursor(rows, 1000);
            if (next === null) break;
            filter = { ...filter, before: next };
          }
          return { text: out.replace(/\r\n$/, ''), json: { csv: out } };
        }
        const limit = limitOf(o, 100);
        const rows = (await run(io, m, m.listRunsStatement(v, filter, limit + 1))).map((r) => m.toRun(r, price));
        const runs = rows.slice(0, limit).map((r) => ({ ...r, createdAt: iso(r.createdAt) }));
        const display = runs.map((r) => ({
          ran: r.createdAt,
          caller: m.callerText(r.caller, r.user),
          brand: r.brandId,
          transport: r.transport,
          outcome: r.outcome,
          // The whole message is in --json and --csv; the table keeps one line of it.
          message: oneLine(r.errorMessage ?? '', 80),
          rows: r.rows,
          bytes_billed: r.bytesBilled,
          ms: r.durationMs,
          cost: m.formatUsd(r.costUsd),
          query: r.queryId ?? (r.sql ?? '').replace(/\s+/g, ' ').slice(0, 60),
        }));
        const more = rows.length > limit ? `\n(more than ${limit}: narrow the filters, raise --limit or use --csv)` : '';
        return {
          text:
            table(display, ['ran', 'caller', 'brand', 'transport', 'outcome', 'message', 'rows', 'bytes_billed', 'ms', 'cost', 'query']) +
            more,
          json: { runs, usdPerTib: price, more: rows.length > limit },
        };
      },
    },
    'history totals': {
      usage: 'history totals [--as USER]',
      summary: 'runs, bytes billed and estimated cost per key, assistant connection and brand over the last 1, 7 and 30 days',
      details: AS_HELP,
      options: { ...SCOPE_OPTIONS },
      async run(o, _p, io) {
        const m = await load();
        const v = await visibility(o, io);
        const price = await pricePerTib();
        const [byCaller, byBrand] = m.totalsStatements(v, io.now);
        const callers = (await run(io, m, byCaller)).map((r) => m.toTotalsRow(r, price));
        const brands = (await run(io, m, byBrand)).map((r) => m.toTotalsRow(r, price));
        const show = (t) => ({
          who:
            t.kind === 'brand'
              ? `brand ${t.id ?? '(none)'}`
              : m.callerText({ kind: t.kind, id: t.id ?? '', name: t.name }, t.userEmail ? { id: t.userEmail, email: t.userEmail } : null),
          ...Object.fromEntries(
            [1, 7, 30].map((d) => [
              `${d}d`,
              `${t.windows[d].runs} runs, ${t.windows[d].bytesBilled} B, ${m.formatUsd(t.windows[d].costUsd)}`,
            ]),
          ),
        });
        return {
          text: `${table(callers.map(show), ['who', '1d', '7d', '30d'])}\n\n${table(brands.map(show), ['who', '1d', '7d', '30d'])}`,
          json: { usdPerTib: price, callers, brands },
        };
      },
    },
  };
}

/** ON_DEMAND_USD_PER_TIB as wrangler.toml sets it (the CLI has no Worker environment of its own). */
async function pricePerTib() {
  const toml = await readFile(join(ROOT, 'wrangler.toml'), 'utf8');
  const match = /^ON_DEMAND_USD_PER_TIB\s*=\s*"(\d+(?:\.\d+)?)"/m.exec(toml);
  if (!match) throw new Error('wrangler.toml has no ON_DEMAND_USD_PER_TIB = "<decimal>" in [vars]');
  return Number(match[1]);
}
