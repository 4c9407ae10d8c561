// No line in src/ is wider than the formatter's print width. Prettier keeps a long string or comment as it is, so
// its check alone lets them through; a reader on a split screen or a review tool should not have to scroll.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const WIDTH = JSON.parse(readFileSync(join(ROOT, '.prettierrc.json'), 'utf8')).printWidth;

function* sourceFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (/\.(ts|tsx|mjs|js)$/.test(entry.name)) yield path;
  }
}

describe('line width', () => {
  it(`keeps every line in src/ within ${WIDTH} characters`, () => {
    const wide = [];
    for (const file of sourceFiles(join(ROOT, 'src'))) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (line.length > WIDTH) wide.push(`${relative(ROOT, file)}:${i + 1} (${line.length})`);
        });
    }
    expect(wide).toEqual([]);
  });
});
