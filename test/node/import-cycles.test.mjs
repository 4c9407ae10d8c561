// No runtime import cycle in src/. A cycle makes module evaluation order decide whether a constant is
// defined yet when another module reads it, and welds unrelated layers together. Type-only imports are erased by
// the compiler, so they do not count: `import type ...`, `export type ... from`, and `import { type A, type B }`
// whose every name is type-only. Dynamic `import()` is lazy and does not count either.
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../scripts/lib/import-ts.mjs';

const SRC = join(ROOT, 'src');
const EXTENSIONS = ['.ts', '.tsx', '.js', '.mjs'];

/** True when an import/export clause brings in at least one value at run time. */
function isRuntimeBinding(node) {
  if (ts.isImportDeclaration(node)) {
    const clause = node.importClause;
    if (!clause) return true; // `import './x'`: evaluated for its side effects
    if (clause.isTypeOnly) return false;
    if (clause.name) return true; // default import
    const named = clause.namedBindings;
    if (!named || ts.isNamespaceImport(named)) return true;
    // `import {} from './x'` still evaluates x; `import { type A }` alone is erased.
    return named.elements.length === 0 || named.elements.some((e) => !e.isTypeOnly);
  }
  if (ts.isExportDeclaration(node)) {
    if (node.isTypeOnly) return false;
    const clause = node.exportClause;
    if (!clause || ts.isNamespaceExport(clause)) return true; // `export * from`, `export * as ns from`
    return clause.elements.length === 0 || clause.elements.some((e) => !e.isTypeOnly);
  }
  return false;
}

/** Module specifiers a source file imports at run time (static imports and re-exports, type-only ones left out). */
export function runtimeImports(source, fileName = 'module.ts') {
  const sf = ts.createSourceFile(
    fileName,
    source,
    ts.ScriptTarget.Latest,
    false,
    fileName.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const out = [];
  for (const node of sf.statements) {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      if (isRuntimeBinding(node)) out.push(node.moduleSpecifier.text);
    }
  }
  return out;
}

/**
 * Every cycle of a directed graph (Map<node, node[]>), one per strongly connected component of more than one node
 * or with a self-edge, each as a path [a, b, ..., a]. Iterative Tarjan, so deep graphs cannot overflow the stack.
 */
export function findCycles(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const work = [{ node: root, edges: graph.get(root) ?? [], i: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      if (frame.i < frame.edges.length) {
        const to = frame.edges[frame.i++];
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edges: graph.get(to) ?? [], i: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node), index.get(to)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent), low.get(frame.node)));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component = [];
        let n;
        do {
          n = stack.pop();
          onStack.delete(n);
          component.push(n);
        } while (n !== frame.node);
        const selfLoop = (graph.get(frame.node) ?? []).includes(frame.node);
        if (component.length > 1 || selfLoop) components.push(component);
      }
    }
  }
  return components.map((component) => cyclePath(graph, new Set(component)));
}

/** One concrete cycle through a strongly connected component, for a readable failure message. */
function cyclePath(graph, members) {
  const start = [...members].sort()[0];
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const to of graph.get(node) ?? []) {
      if (!members.has(to)) continue;
      if (to === start) {
        const path = [start];
        for (let n = node; n !== start; n = previous.get(n)) path.splice(1, 0, n);
        return [...path, start];
      }
      if (!previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start, start];
}

async function sourceFiles(dir) {
  const out = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sourceFiles(path)));
    else if (/\.(ts|tsx)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function resolveRelative(from, specifier, files) {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base, ...EXTENSIONS.map((e) => base + e), ...EXTENSIONS.map((e) => join(base, `index${e}`))]) {
    if (files.has(candidate)) return candidate;
  }
  return null;
}

/** The runtime import graph of src/ (paths relative to the repository), and relative imports that did not resolve. */
export async function srcImportGraph() {
  const paths = await sourceFiles(SRC);
  const files = new Set(paths);
  // Plain .js modules (the vendored parser glue) are nodes too, without edges of their own.
  for (const entry of await readdir(SRC, { recursive: true })) if (/\.m?js$/.test(entry)) files.add(join(SRC, entry));
  const graph = new Map();
  const unresolved = [];
  for (const path of paths) {
    const edges = [];
    for (const specifier of runtimeImports(await readFile(path, 'utf8'), path)) {
      // Packages, and relative paths out of src/ (a package's own file), cannot lead back into src/.
      if (!specifier.startsWith('.') || relative(SRC, resolve(dirname(path), specifier)).startsWith('..')) continue;
      const target = resolveRelative(path, specifier, files);
      if (target === null) unresolved.push(`${relative(ROOT, path)} -> ${specifier}`);
      else edges.push(relative(ROOT, target));
    }
    graph.set(relative(ROOT, path), edges);
  }
  return { graph, unresolved };
}

describe('runtimeImports', () => {
  it.each([
    ["import { a } from './a';", ['./a']],
    ["import a from './a';", ['./a']],
    ["import * as a from './a';", ['./a']],
    ["import './a';", ['./a']],
    ["import {} from './a';", ['./a']],
    ["import a, { type B } from './a';", ['./a']],
    ["import { type A, b } from './a';", ['./a']],
    ["export { a } from './a';", ['./a']],
    ["export * from './a';", ['./a']],
    ["export * as a from './a';", ['./a']],
    ["import type { A } from './a';", []],
    ["import type A from './a';", []],
    ["import { type A } from './a';", []],
    ["import { type A, type B } from './a';", []],
    ["export type { A } from './a';", []],
    ["export { type A } from './a';", []],
    ["const m = await import('./a');", []],
    ['export const a = 1;', []],
  ])('%s -> %j', (source, expected) => {
    expect(runtimeImports(source)).toEqual(expected);
  });

  it('reads TSX files', () => {
    expect(runtimeImports("import { Layout } from './layout';\nexport const P = () => <Layout title='x' />;", 'page.tsx')).toEqual([
      './layout',
    ]);
  });
});

describe('findCycles', () => {
  const graph = (edges) => new Map(Object.entries(edges));

  it('finds nothing in an acyclic graph (a diamond)', () => {
    expect(findCycles(graph({ a: ['b', 'c'], b: ['d'], c: ['d'], d: [] }))).toEqual([]);
  });

  it('finds a two-module cycle', () => {
    expect(findCycles(graph({ a: ['b'], b: ['a'] }))).toEqual([['a', 'b', 'a']]);
  });

  it('finds a long cycle and names every module on it', () => {
    const cycles = findCycles(
      graph({
        'app.ts': ['admin/register.ts', 'lib/log.ts'],
        'admin/register.ts': ['oauth/authorize.routes.tsx'],
        'oauth/authorize.routes.tsx': ['oauth/provider.ts'],
        'oauth/provider.ts': ['mcp/handler.ts'],
        'mcp/handler.ts': ['app.ts', 'lib/log.ts'],
        'lib/log.ts': [],
      }),
    );
    expect(cycles).toEqual([
      ['admin/register.ts', 'oauth/authorize.routes.tsx', 'oauth/provider.ts', 'mcp/handler.ts', 'app.ts', 'admin/register.ts'],
    ]);
  });

  it('finds a self-import and separate cycles separately', () => {
    const cycles = findCycles(graph({ a: ['a'], b: ['c'], c: ['b'], d: ['b'] }));
    expect(cycles).toHaveLength(2);
    expect(cycles).toContainEqual(['a', 'a']);
    expect(cycles).toContainEqual(['b', 'c', 'b']);
  });
});

describe('src/', () => {
  it('has no runtime import cycle', async () => {
    const { graph, unresolved } = await srcImportGraph();
    // The check only means something if it sees the whole tree.
    expect(graph.size).toBeGreaterThan(50);
    expect(graph.get('src/index.ts')).toContain('src/app.ts');
    expect(unresolved).toEqual([]);
    const cycles = findCycles(graph).map((c) => c.join(' -> '));
    expect(cycles, `runtime import cycles in src/ (use a leaf module or \`import type\`):\n${cycles.join('\n')}`).toEqual([]);
  });
});
