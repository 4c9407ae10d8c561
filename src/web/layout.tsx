import type { Child, FC } from 'hono/jsx';
import { ADMIN_NAV, type AdminPageId } from './nav';

/**
 * The one stylesheet, inline (no external assets). Mobile first: forms stack, tables turn into labelled cards
 * under 720px; touch targets are at least 44px (form controls, buttons, the navigation) or 24px (every other link: WCAG 2.2's
 * minimum, success criterion 2.5.8); focus is always visible. Names, ids and SQL may be one long word: cells break
 * them anywhere rather than widen the table past its card (test/node/browser-layout.test.mjs holds both at 1280 and 390 px).
 */
const CSS = `
:root{color-scheme:light dark;--bg:#f6f7f9;--fg:#1b1f24;--muted:#57606a;--card:#fff;--line:#d0d7de;--accent:#0b5cad;--accent-fg:#fff;
 --danger:#b42318;--ok:#1a7f37;--warn-bg:#fff8c5;--warn-line:#d4a72c}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9da7b3;--card:#161b22;--line:#30363d;--accent:#4493f8;
 --accent-fg:#0d1117;--danger:#f85149;--ok:#3fb950;--warn-bg:#3b2e00;--warn-line:#9e6a03}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--fg)}
header.top{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between;padding:.75rem 1rem;
 border-bottom:1px solid var(--line);background:var(--card)}
header.top .brand{font-weight:600}
header.top form{margin:0}
main{max-width:1200px;margin:0 auto;padding:1rem}
nav.pages{display:flex;flex-wrap:wrap;gap:.25rem 1rem;padding:0 1rem;border-bottom:1px solid var(--line);background:var(--card)}
nav.pages a{display:inline-flex;align-items:center;min-height:44px;padding:0 .25rem;text-decoration:none;
 border-bottom:3px solid transparent}
nav.pages a[aria-current="page"]{border-bottom-color:var(--accent);font-weight:600;color:var(--fg)}
nav.pages .nav-short{display:none}
main.narrow{max-width:520px}
h1{font-size:1.5rem;margin:.5rem 0 1rem}
h2{font-size:1.2rem;margin:0 0 .75rem}
section.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem;margin:0 0 1rem}
p.muted,.muted{color:var(--muted)}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
label .hint{font-weight:400;color:var(--muted);font-size:.9rem}
input,select{width:100%;min-height:44px;padding:.5rem .75rem;font:inherit;color:inherit;background:var(--bg);border:1px solid var(--line);
 border-radius:6px}
input[readonly]{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
label.check{display:flex;gap:.6rem;align-items:center;font-weight:400;min-height:44px;margin:.25rem 0}
label.check input{width:24px;height:24px;min-height:24px;flex:none;margin:0;padding:0}
fieldset{border:1px solid var(--line);border-radius:6px;margin:1rem 0 0;padding:0 1rem 1rem}
legend{font-weight:600;padding:0 .25rem}
.grid{display:grid;gap:0 1rem;grid-template-columns:1fr}
@media (min-width:720px){.grid.three{grid-template-columns:repeat(3,1fr)}.grid.two{grid-template-columns:2fr 1fr}}
button,.button{display:inline-flex;align-items:center;justify-content:center;min-height:44px;padding:.5rem 1rem;font:inherit;
 font-weight:600;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:var(--accent-fg);cursor:pointer;
 text-decoration:none}
button.secondary,.button.secondary{background:transparent;color:var(--accent)}
button.danger{background:transparent;color:var(--danger);border-color:var(--danger)}
button:focus-visible,a:focus-visible,input:focus-visible,select:focus-visible,summary:focus-visible{outline:3px solid var(--accent);
 outline-offset:2px}
summary{cursor:pointer;color:var(--accent);font-weight:600;padding:.65rem 0;min-height:44px}
details[open]>summary{margin-bottom:.25rem}
form.limits{min-width:12rem}
form.limits label{margin-top:.5rem}
form.limits .hint{margin:.25rem 0;font-size:.9rem;color:var(--muted)}
form.limits .alert{margin:.5rem 0}
input[aria-invalid="true"]{border-color:var(--danger);border-width:2px}
.blocked{color:var(--danger)}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.actions{display:flex;flex-wrap:wrap;gap:.75rem;margin-top:1rem}
.actions>*{flex:1 1 10rem}
a{color:var(--accent)}
a:not(.button){display:inline-block;min-height:24px;min-width:24px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em;word-break:break-all}
td code,.nw{white-space:nowrap;word-break:normal}
body{overflow-wrap:break-word}
td,tbody th,dd,pre,.said,.error-message{overflow-wrap:anywhere}
button,.button,.status-live{overflow-wrap:normal;white-space:nowrap}
/* Never broken inside a word (a column's type): anywhere makes a cell's min-content one letter wide. */
.keep-words{overflow-wrap:normal}
code.address{display:block;padding:.5rem .75rem;margin:.5rem 0;background:var(--bg);border:1px solid var(--line);border-radius:6px;
 font-size:1rem}
.status-live{color:var(--ok);font-weight:600}
.status{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.button.danger{background:transparent;color:var(--danger);border-color:var(--danger)}
.notice{border:1px solid var(--ok);border-left-width:4px;border-radius:6px;padding:.75rem 1rem;margin:0 0 1rem;background:var(--card)}
.alert{border:1px solid var(--danger);border-left-width:4px;border-radius:6px;padding:.75rem 1rem;margin:1rem 0;background:var(--card)}
.warning{border:1px solid var(--warn-line);border-left-width:4px;border-radius:6px;padding:.75rem 1rem;margin:1rem 0;
 background:var(--warn-bg)}
table{width:100%;border-collapse:collapse}
caption{text-align:left;color:var(--muted);padding:0 0 .5rem}
th,td{text-align:left;vertical-align:top;padding:.5rem;border-bottom:1px solid var(--line)}
td form{margin:0}
.status-revoked{color:var(--muted)}
ul.plain{padding-left:1.2rem;margin:.25rem 0}
table.keys{font-size:.9rem}
table.keys td{padding:.4rem .5rem}
table.keys ul.plain{list-style:none;padding:0;margin:0}
table.keys ul.plain li{display:inline}
table.keys ul.plain li+li::before{content:" · ";color:var(--muted)}
table.keys summary{padding:.25rem 0}
table.keys td[data-label="Limits"] ul.plain{font-size:.85em;line-height:1.35}
table.keys .status .button{min-height:36px;padding:.25rem .75rem}
@media (min-width:720px){
 table.keys td[data-label="Name"],table.keys td[data-label="Scope"]{min-width:8rem}
 table.keys td[data-label="Limits"]{min-width:17rem}
 table.keys td[data-label="Used, last 24 h"]{min-width:9rem}
 table.keys .status{flex-wrap:nowrap}
 table.keys summary{min-height:0}
}
@media (max-width:719px){
 nav.pages{flex-wrap:nowrap;gap:0 .2rem;overflow-x:auto;padding:0 .5rem;white-space:nowrap}
 nav.pages a{padding:0}
 nav.pages .nav-long{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
 nav.pages .nav-short{display:inline}
 table,caption,thead,tbody,tr,th,td{display:block}
 thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
 tr{border:1px solid var(--line);border-radius:6px;margin:0 0 .75rem;padding:.25rem .5rem}
 td{border:0;padding:.35rem 0;display:grid;grid-template-columns:7.5rem minmax(0,1fr);gap:.5rem}
 form.limits{min-width:0}
 td::before{content:attr(data-label);font-weight:600;color:var(--muted)}
}
.markdown{overflow-wrap:anywhere}
.markdown pre{white-space:pre-wrap;margin:.5rem 0}
.markdown h4,.markdown h5,.markdown h6{margin:.5rem 0 .25rem}
.markdown blockquote{margin:.5rem 0;padding-left:.75rem;border-left:3px solid var(--line);color:var(--muted)}
.md-table{overflow-x:auto;margin:.5rem 0;max-width:100%}
.md-table table{display:table;width:auto;min-width:50%}
.md-table thead{display:table-header-group;position:static;width:auto;height:auto;overflow:visible;clip:auto}
.md-table tbody{display:table-row-group}
.md-table tr{display:table-row;border:0;margin:0;padding:0}
.md-table th,.md-table td{display:table-cell;padding:.35rem .5rem;border:1px solid var(--line);overflow-wrap:normal}
.md-table td::before{content:none}
.md-table .al-right{text-align:right}.md-table .al-center{text-align:center}
.md-image{display:inline-flex;flex-wrap:wrap;gap:.25rem .75rem;align-items:center;padding:.25rem .6rem;border:1px dashed var(--line);
 border-radius:6px;background:var(--card)}
img.md-image{max-width:100%;height:auto;padding:0;border:0}
`;

// A favicon inline (no asset route, and the CSP's img-src allows data:): a database cylinder in the accent blue.
const FAVICON = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0b5cad"/>' +
    '<g fill="none" stroke="#fff" stroke-width="2.5"><ellipse cx="16" cy="9" rx="9" ry="3.5"/>' +
    '<path d="M7 9v14c0 2 4 3.5 9 3.5s9-1.5 9-3.5V9M7 16c0 2 4 3.5 9 3.5s9-1.5 9-3.5"/></g></svg>',
)}`;

export interface LayoutProps {
  title: string;
  nonce: string;
  /** Top bar right side, e.g. the signed-in user and a sign-out form. */
  header?: Child;
  /** On an administration page: which one, to draw the navigation bar with it marked. */
  current?: AdminPageId;
  narrow?: boolean;
  children?: Child;
}

export const Layout: FC<LayoutProps> = ({ title, nonce, header, current, narrow, children }) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="same-origin" />
      <title>{title} · Warehouse Query API</title>
      <link rel="icon" type="image/svg+xml" href={FAVICON} />
      <style nonce={nonce} dangerouslySetInnerHTML={{ __html: CSS }} />
    </head>
    <body>
      <header class="top">
        <span class="brand">Warehouse Query API</span>
        {header}
      </header>
      {current ? (
        <nav class="pages" aria-label="Administration">
          {ADMIN_NAV.map((p) => (
            <a href={p.href} aria-current={p.id === current ? 'page' : undefined}>
              {/* A label without a shorter form stays as it is on a phone (hiding it there left an 8 px link). */}
              {p.short !== p.label ? (
                <>
                  <span class="nav-long">{p.label}</span>
                  <span class="nav-short" aria-hidden="true">
                    {p.short}
                  </span>
                </>
              ) : (
                p.label
              )}
            </a>
          ))}
        </nav>
      ) : null}
      <main class={narrow ? 'narrow' : undefined} id="main">
        {children}
      </main>
    </body>
  </html>
);

/**
 * "2026-05-01 12:34 UTC" in a <time> element. The date and the time are each kept on one line, so a narrow cell
 * breaks between them, never inside one.
 */
export const Time: FC<{ ms: number | null; none?: string }> = ({ ms, none }) => {
  if (ms === null) return <span class="muted">{none ?? 'never'}</span>;
  const iso = new Date(ms).toISOString();
  return (
    <time datetime={iso}>
      <span class="nw">{iso.slice(0, 10)}</span> <span class="nw">{iso.slice(11, 16)} UTC</span>
    </time>
  );
};

/** Signed-in user and the sign-out form, for the top bar. */
export const UserBar: FC<{ email: string; csrf: string; next?: string }> = ({ email, csrf, next }) => (
  <form method="post" action="/admin/logout" class="userbar">
    <span class="muted">Signed in as {email}</span> <input type="hidden" name="csrf" value={csrf} />
    {next ? <input type="hidden" name="next" value={next} /> : null}
    <button type="submit" class="secondary">
      Sign out
    </button>
  </form>
);

/**
 * The frame of every administration page: the navigation bar with this page marked, the signed-in user, the
 * page's heading and, after a redirect, its notice (`role="status"`).
 */
export const AdminPage: FC<{
  nonce: string;
  title: string;
  current: AdminPageId;
  email: string;
  csrf: string;
  notice?: string;
  children?: Child;
}> = ({ nonce, title, current, email, csrf, notice, children }) => (
  <Layout title={title} nonce={nonce} current={current} header={<UserBar email={email} csrf={csrf} />}>
    <h1>{title}</h1>
    {notice ? (
      <p class="notice" role="status">
        {notice}
      </p>
    ) : null}
    {children}
  </Layout>
);

/** A page that only says something: refusals, expired forms, errors. */
export const MessagePage: FC<{ nonce: string; title: string; header?: Child; children?: Child }> = ({ nonce, title, header, children }) => (
  <Layout title={title} nonce={nonce} header={header} narrow>
    <section class="card">
      <h1>{title}</h1>
      {children}
    </section>
  </Layout>
);

export const NotAdminMessage: FC<{ email: string }> = ({ email }) => (
  <>
    <p>
      You are signed in as <strong>{email}</strong>, who does not administer any organization or brand.
    </p>
    <p>
      Only administrators can manage API keys and connect AI assistants. Ask an administrator of your organization for access, or sign out
      and sign in with an administrator account.
    </p>
  </>
);

export interface ConfirmPageProps {
  nonce: string;
  title: string;
  email: string;
  csrf: string;
  /** Where the confirming form posts (it carries `confirm=yes`, the CSRF token and `fields`). */
  action: string;
  fields?: Record<string, string>;
  /** The destructive button's text, e.g. "Revoke key". */
  confirmLabel: string;
  cancelHref: string;
  children?: Child;
}

/**
 * A confirmation step before something that cannot be undone: a page of its own with the consequences and a form,
 * so it works without JavaScript. The action refuses a post without `confirm=yes`.
 */
export const ConfirmPage: FC<ConfirmPageProps> = ({ nonce, title, email, csrf, action, fields, confirmLabel, cancelHref, children }) => (
  <Layout title={title} nonce={nonce} header={<UserBar email={email} csrf={csrf} />} narrow>
    <section class="card">
      <h1>{title}</h1>
      {children}
      <form method="post" action={action}>
        <input type="hidden" name="csrf" value={csrf} />
        <input type="hidden" name="confirm" value="yes" />
        {Object.entries(fields ?? {}).map(([name, value]) => (
          <input type="hidden" name={name} value={value} />
        ))}
        <div class="actions">
          <button type="submit" class="danger">
            {confirmLabel}
          </button>
          <a class="button secondary" href={cancelHref}>
            Cancel
          </a>
        </div>
      </form>
    </section>
  </Layout>
);
