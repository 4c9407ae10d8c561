/**
 * Where each value of a JSON text starts, so a catalog refusal can name the line: `lineOf(text)` walks the text
 * once (after JSON.parse accepted it) and maps each value's path (`sections/0/sql/3`) to its 1-based line.
 * JSON.parse's own syntax errors carry a character position; `lineAt` turns it into a line.
 */
export type JsonPath = readonly (string | number)[];

export function pathKey(path: JsonPath): string {
  return path.map(String).join('/');
}

/** The 1-based line of character offset `pos`. */
export function lineAt(text: string, pos: number): number {
  let line = 1;
  for (let i = 0; i < pos && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** Line of every value in a valid JSON text, by path key. */
export function valueLines(text: string): Map<string, number> {
  const lines = new Map<string, number>();
  let i = 0;
  let line = 1;
  const skipSpace = () => {
    for (;;) {
      const c = text[i];
      if (c === '\n') line++;
      else if (c !== ' ' && c !== '\t' && c !== '\r' && c !== '\uFEFF') return;
      i++;
    }
  };
  const readString = (): string => {
    const start = i;
    i++; // opening quote
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (path: (string | number)[]) => {
    skipSpace();
    lines.set(pathKey(path), line);
    const c = text[i];
    if (c === '{') {
      i++;
      skipSpace();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        skipSpace();
        const key = readString();
        skipSpace();
        i++; // colon
        value([...path, key]);
        skipSpace();
        if (text[i++] === '}') return;
      }
    }
    if (c === '[') {
      i++;
      skipSpace();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (let n = 0; ; n++) {
        value([...path, n]);
        skipSpace();
        if (text[i++] === ']') return;
      }
    }
    if (c === '"') {
      readString();
      return;
    }
    while (i < text.length && !/[\s,\]}]/.test(text[i] ?? '')) i++;
  };
  value([]);
  return lines;
}

/** The line of `path`, or of its nearest ancestor that has one. */
export function lineOfPath(lines: Map<string, number>, path: JsonPath): number | undefined {
  for (let n = path.length; n >= 0; n--) {
    const hit = lines.get(pathKey(path.slice(0, n)));
    if (hit !== undefined) return hit;
  }
  return undefined;
}
