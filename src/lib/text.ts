/**
 * Text that can spoof what a reader sees: control characters (C0 but tab, newline and carriage return; DEL; C1),
 * bidirectional overrides, embeddings, isolates and marks (a right-to-left override turns `evil.exe.txt` into
 * `evil.txt.exe` on screen), and zero-width or invisible characters (two names that look equal but are not).
 * Control characters are refused on write (names, memory titles and content); every such character is shown as
 * `[U+XXXX]` on the admin pages (src/web/render.ts), so what an administrator reads is what is stored.
 * Pure, and plain JavaScript regexes, so the admin CLI bundles it with the field schemas.
 */

/** C0 controls except \t \n \r, DEL, C1 controls. */
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/u;
/** The same plus \t \n \r: what a one-line name or title may not hold. */
const CONTROL_OR_LINE_BREAK = /[\u0000-\u001F\u007F-\u009F]/u;

/** Characters shown neutralised: every control but the HTML whitespace ones, bidi controls, zero-width and invisible ones. */
const SPOOFING =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/gu;

/** Why `text` is refused as a one-line name or title, or null: no control characters, no line breaks or tabs. */
export function nameProblem(text: string): string | null {
  const m = CONTROL_OR_LINE_BREAK.exec(text);
  return m === null ? null : `must not contain control characters (found ${codePoint(m[0])})`;
}

/** Why `text` is refused as multi-line text (markdown), or null: no control characters but tab and line breaks. */
export function textProblem(text: string): string | null {
  const m = CONTROL.exec(text);
  return m === null ? null : `must not contain control characters (found ${codePoint(m[0])})`;
}

function codePoint(ch: string): string {
  return `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** `text` with every spoofing character replaced by its visible `[U+XXXX]`. */
export function neutralise(text: string): string {
  return text.replace(SPOOFING, (ch) => `[${codePoint(ch)}]`);
}
