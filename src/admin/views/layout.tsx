import type { Child, FC } from 'hono/jsx';

/**
 * The one stylesheet, inline (no external assets). Mobile first: forms stack, tables turn into labelled cards
 * under 720px; touch targets are at least 44px; focus is always visible.
 */
const CSS = `
:root{color-scheme:light dark;--bg:#f6f7f9;--fg:#1b1f24;--muted:#57606a;--card:#fff;--line:#d0d7de;--accent:#0b5cad;--accent-fg:#fff;--danger:#b42318;--ok:#1a7f37;--warn-bg:#fff8c5;--warn-line:#d4a72c}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9da7b3;--card:#161b22;--line:#30363d;--accent:#4493f8;--accent-fg:#0d1117;--danger:#f85149;--ok:#3fb950;--warn-bg:#3b2e00;--warn-line:#9e6a03}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--fg)}
header.top{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between;padding:.75rem 1rem;border-bottom:1px solid var(--line);background:var(--card)}
header.top .brand{font-weight:600}
header.top form{margin:0}
main{max-width:1040px;margin:0 auto;padding:1rem}
main.narrow{max-width:520px}
h1{font-size:1.5rem;margin:.5rem 0 1rem}
h2{font-size:1.2rem;margin:0 0 .75rem}
section.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem;margin:0 0 1rem}
p.muted,.muted{color:var(--muted)}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
label .hint{font-weight:400;color:var(--muted);font-size:.9rem}
input,select{width:100%;min-height:44px;padding:.5rem .75rem;font:inherit;color:inherit;background:var(--bg);border:1px solid var(--line);border-radius:6px}
input[readonly]{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
fieldset{border:1px solid var(--line);border-radius:6px;margin:1rem 0 0;padding:0 1rem 1rem}
legend{font-weight:600;padding:0 .25rem}
.grid{display:grid;gap:0 1rem;grid-template-columns:1fr}
@media (min-width:720px){.grid.three{grid-template-columns:repeat(3,1fr)}.grid.two{grid-template-columns:2fr 1fr}}
button,.button{display:inline-flex;align-items:center;justify-content:center;min-height:44px;padding:.5rem 1rem;font:inherit;font-weight:600;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:var(--accent-fg);cursor:pointer;text-decoration:none}
button.secondary,.button.secondary{background:transparent;color:var(--accent)}
button.danger{background:transparent;color:var(--danger);border-color:var(--danger)}
button:focus-visible,a:focus-visible,input:focus-visible,select:focus-visible,summary:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
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
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em;word-break:break-all}
.notice{border:1px solid var(--ok);border-left-width:4px;border-radius:6px;padding:.75rem 1rem;margin:0 0 1rem;background:var(--card)}
.alert{border:1px solid var(--danger);border-left-width:4px;border-radius:6px;padding:.75rem 1rem;margin:1rem 0;background:var(--card)}
.warning{border:1px solid var(--warn-line);border-left-width:4px;border-radius:6px;padding:.75rem 1rem;margin:1rem 0;background:var(--warn-bg)}
table{width:100%;border-collapse:collapse}
caption{text-align:left;color:var(--muted);padding:0 0 .5rem}
th,td{text-align:left;vertical-align:top;padding:.5rem;border-bottom:1px solid var(--line)}
td form{margin:0}
.status-revoked{color:var(--muted)}
ul.plain{padding-left:1.2rem;margin:.25rem 0}
@media (max-width:719px){
 table,caption,thead,tbody,tr,th,td{display:block}
 thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
 tr{border:1px solid var(--line);border-radius:6px;margin:0 0 .75rem;padding:.25rem .5rem}
 td{border:0;padding:.35rem 0;display:grid;grid-template-columns:8rem 1fr;gap:.5rem}
 td::before{content:attr(data-label);font-weight:600;color:var(--muted)}
}
`;

export interface LayoutProps {
  title: string;
  nonce: string;
  /** Top bar right side, e.g. the signed-in user and a sign-out form. */
  header?: Child;
  narrow?: boolean;
  children?: Child;
}

export const Layout: FC<LayoutProps> = ({ title, nonce, header, narrow, children }) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="same-origin" />
      <title>{title} · Warehouse Query API</title>
      <style nonce={nonce} dangerouslySetInnerHTML={{ __html: CSS }} />
    </head>
    <body>
      <header class="top">
        <span class="brand">Warehouse Query API</span>
        {header}
      </header>
      <main class={narrow ? 'narrow' : undefined} id="main">
        {children}
      </main>
    </body>
  </html>
);
