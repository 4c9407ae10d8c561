import type { Context, Hono } from 'hono';
import type { FC } from 'hono/jsx';
import type { AppEnv } from '../../app-env';
import { listManagedKeys } from '../keys/keys';
import {
  callerPickers,
  type ConnectionChoice,
  listConnections,
  CSV_MAX_ROWS,
  csvHeader,
  csvRow,
  formatUsd,
  HISTORY_PAGE_SIZE,
  listRuns,
  loadTotals,
  nextCursor,
  parseHistoryFilter,
  TOTAL_WINDOWS,
  usdPerTib,
  type HistoryFilter,
  type Run,
  type TotalsRow,
} from './history';
import { visibilityOf } from '../../auth/ownership';
import { type Admin, adminGet } from '../../web/guards';
import { AdminPage, MessagePage, Time } from '../../web/layout';
import { renderPage } from '../../web/render';
import { count, formatBytes, plural } from '../keys/units';
import {
  CallerCell,
  ConsoleCss,
  FilterForm,
  filterQuery,
  listPage,
  ListCard,
  RetentionNote,
  type FilterField,
  type ListColumn,
} from '../../web/console-parts';
import { configOf } from '../../env';

const PATH = '/admin/history';
/** Rows read per statement while building a CSV export. */
const CSV_BATCH = 1000;

const Caller: FC<{ r: Pick<Run, 'caller' | 'user'> }> = ({ r }) => <CallerCell base={PATH} caller={r.caller} user={r.user} />;

/** A run's brand by its name where the administrator's reach names it (the id stays in the tooltip), else its id. */
const BrandCell: FC<{ brandId: string | null; names: ReadonlyMap<string, string> }> = ({ brandId, names }) => {
  if (brandId === null) return <span class="muted">none</span>;
  const name = names.get(brandId);
  return name ? <span title={brandId}>{name}</span> : <>{brandId}</>;
};

const RunRow: FC<{ r: Run; brandNames: ReadonlyMap<string, string> }> = ({ r, brandNames }) => (
  <tr id={`run-${r.id}`}>
    <td data-label="Ran">
      <Time ms={r.createdAt} />
      <div class="muted">{r.transport === 'mcp' ? 'MCP' : 'REST'}</div>
    </td>
    <td data-label="Caller">
      <Caller r={r} />
    </td>
    <td data-label="Brand">
      <BrandCell brandId={r.brandId} names={brandNames} />
    </td>
    <td data-label="Query">
      {r.queryId ? (
        <div>
          stored query <a href={`${PATH}?query=${encodeURIComponent(r.queryId)}`}>{r.queryId}</a>
          {r.period ? ` for ${r.period.startDate} to ${r.period.endDate}` : ''}
        </div>
      ) : null}
      {r.sql ? <pre class="sql">{r.sql}</pre> : <span class="muted">no SQL (refused before it was resolved)</span>}
      <div class="muted">request {r.requestId}</div>
    </td>
    <td data-label="Outcome">
      {r.errorCode === null ? (
        r.dryRun ? (
          'OK (dry run)'
        ) : (
          'OK'
        )
      ) : (
        <>
          <span class="blocked">{r.errorCode}</span>
          {r.errorMessage ? <div class="error-message">{r.errorMessage}</div> : null}
        </>
      )}
    </td>
    <td data-label="Rows" class="num">
      {r.rows === null ? '–' : count(r.rows)}
    </td>
    <td data-label="Bytes billed" class="num">
      {r.bytesBilled === null ? '–' : formatBytes(r.bytesBilled)}
    </td>
    <td data-label="Duration" class="num">
      {r.durationMs === null ? '–' : `${count(r.durationMs)} ms`}
    </td>
    <td data-label="Est. cost" class="num">
      {formatUsd(r.costUsd)}
    </td>
  </tr>
);

const RUN_COLUMNS: ListColumn[] = [
  { label: 'Ran' },
  { label: 'Caller' },
  { label: 'Brand' },
  { label: 'Query' },
  { label: 'Outcome' },
  { label: 'Rows', num: true },
  { label: 'Bytes billed', num: true },
  { label: 'Duration', num: true },
  { label: 'Est. cost', num: true },
];

const WINDOW_LABEL: Record<(typeof TOTAL_WINDOWS)[number], string> = { 1: '24 h', 7: '7 days', 30: '30 days' };

const TotalsTable: FC<{ caption: string; rows: TotalsRow[]; first: string }> = ({ caption, rows, first }) => (
  <table class="compact totals">
    <caption>{caption}</caption>
    <thead>
      <tr>
        <th scope="col">{first}</th>
        {TOTAL_WINDOWS.map((d) => (
          <th scope="col" class="num">
            {WINDOW_LABEL[d]}
          </th>
        ))}
      </tr>
    </thead>
    <tbody>
      {rows.map((t) => (
        <tr>
          <th scope="row" data-label={first}>
            {t.kind === 'brand' ? t.id === null ? <span class="muted">no brand</span> : (t.name ?? t.id) : null}
            {t.kind === 'key' ? <>key {t.name ?? t.id}</> : null}
            {t.kind === 'connection' ? (
              <>
                {t.name ?? `assistant ${(t.id ?? '').slice(0, 12)}…`}
                {t.userEmail ? <div class="muted">for {t.userEmail}</div> : null}
              </>
            ) : null}
          </th>
          {TOTAL_WINDOWS.map((d) => (
            <td data-label={WINDOW_LABEL[d]} class="num">
              {plural(t.windows[d].runs, 'run')}, {formatBytes(t.windows[d].bytesBilled)}, {formatUsd(t.windows[d].costUsd)}
            </td>
          ))}
        </tr>
      ))}
    </tbody>
  </table>
);

function filterFields(admin: Admin, keys: { id: string; name: string }[], connections: ConnectionChoice[]): FilterField[] {
  return [
    { name: 'brand', label: 'Brand', options: admin.user.reach.brands.map((b) => ({ value: b.id, label: b.name ?? b.id })) },
    { name: 'key', label: 'API key', options: keys.map((k) => ({ value: k.id, label: k.name })) },
    ...callerPickers(connections),
    { name: 'outcome', label: 'Outcome', placeholder: 'ok, error or a code' },
    { name: 'query', label: 'Stored query', placeholder: 'query id' },
    { name: 'requestId', label: 'Request id', placeholder: 'req_…' },
    { name: 'from', label: 'From', type: 'date' },
    { name: 'to', label: 'To', type: 'date' },
  ];
}

async function renderHistory(c: Context<AppEnv>, admin: Admin) {
  const raw = c.req.query();
  const parsed = parseHistoryFilter(raw);
  const filter: HistoryFilter = parsed.success ? parsed.data : {};
  const v = visibilityOf(admin.user.reach);
  const now = Date.now();
  const [runs, totals, keys, connections] = await Promise.all([
    parsed.success ? listRuns(c.env, v, filter, HISTORY_PAGE_SIZE + 1) : Promise.resolve([]),
    loadTotals(c.env, v, now),
    listManagedKeys(c.env, admin.user.reach),
    listConnections(c.env, v),
  ]);
  const page = listPage(runs, HISTORY_PAGE_SIZE);
  const price = usdPerTib(c.env);
  const brandNames = new Map(admin.user.reach.brands.flatMap((b) => (b.name ? [[b.id, b.name] as const] : [])));
  return renderPage(c, parsed.success ? 200 : 400, (nonce) => (
    <AdminPage title="Query history" nonce={nonce} current="history" email={admin.user.reach.email} csrf={admin.csrf}>
      <ConsoleCss nonce={nonce} />
      <FilterForm
        action={PATH}
        fields={filterFields(admin, keys, connections)}
        values={raw}
        error={parsed.success ? undefined : parsed.error.issues[0]?.message}
      />
      <ListCard
        id="runs"
        title="Runs"
        before={
          <>
            <p>
              <a href={`${PATH}.csv?${filterQuery(raw)}`}>Download these runs as CSV</a>{' '}
              <span class="muted">(every matching run, up to {count(CSV_MAX_ROWS)})</span>
            </p>
            <RetentionNote days={configOf(c.env).QUERY_LOG_RETENTION_DAYS} />
          </>
        }
        caption={`Every run, accepted or refused, newest first. Estimated cost: bytes billed at $${price} per TiB (on-demand).`}
        columns={RUN_COLUMNS}
        count={page.shown.length}
        empty="No runs match."
        tableClass="compact"
        pager={{ href: page.next ? `${PATH}?${filterQuery(raw, { before: page.next })}` : null, label: 'Older runs' }}
      >
        {page.shown.map((r) => (
          <RunRow r={r} brandNames={brandNames} />
        ))}
      </ListCard>
      <section class="card" aria-labelledby="totals-heading">
        <h2 id="totals-heading">Totals</h2>
        <p class="muted">
          Runs, bytes billed and estimated cost in the last 24 hours, 7 and 30 days, of every run you can see (filters do not apply).
        </p>
        {totals.callers.length === 0 ? (
          <p class="muted">No runs in the last 30 days.</p>
        ) : (
          <>
            <TotalsTable caption="Per API key and assistant connection" rows={totals.callers} first="Caller" />
            <TotalsTable caption="Per brand" rows={totals.brands} first="Brand" />
          </>
        )}
      </section>
    </AdminPage>
  ));
}

/** The query history: `/admin/history` (runs, filters, totals) and `/admin/history.csv` (the matching runs). */
export function historyRoutes(admin: Hono<AppEnv>): void {
  adminGet(admin, '/history', (c, signedIn) => renderHistory(c, signedIn));

  adminGet(admin, '/history.csv', async (c, signedIn) => {
    const parsed = parseHistoryFilter(c.req.query());
    if (!parsed.success) {
      return renderPage(c, 400, (nonce) => (
        <MessagePage nonce={nonce} title="Not exported">
          <p>{parsed.error.issues[0]?.message}</p>
        </MessagePage>
      ));
    }
    const v = visibilityOf(signedIn.user.reach);
    let out = csvHeader();
    let rows = 0;
    let filter: HistoryFilter = { ...parsed.data };
    for (;;) {
      const batch = await listRuns(c.env, v, filter, CSV_BATCH + 1);
      for (const r of batch.slice(0, CSV_BATCH)) out += csvRow(r);
      rows += Math.min(batch.length, CSV_BATCH);
      const next = nextCursor(batch, CSV_BATCH);
      if (next === null) break;
      if (rows >= CSV_MAX_ROWS) {
        // Never a silently cut file: say so and ask for a narrower filter.
        return renderPage(c, 413, (nonce) => (
          <MessagePage nonce={nonce} title="Too many runs to export">
            <p>More than {count(CSV_MAX_ROWS)} runs match. Narrow the dates or another filter and export again.</p>
          </MessagePage>
        ));
      }
      filter = { ...filter, before: next };
    }
    return c.body(out, 200, {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="query-history-${new Date().toISOString().slice(0, 10)}.csv"`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
  });
}
