// Unused exports in src/: a name a module exports that no other file imports (src/, test/, and the Node tooling
// in scripts/, dev/, bench/, which also names Worker modules as `'src/x.ts': ['name']` for importWorkerModules).
// Such an export is dead code and should go. An export its own file also uses (a type in an exported signature,
// a constant a test may read) is not reported. Run by `npm run typecheck` (so by `npm test`); exits 1 with one line
// per finding.
//
// Syntactic, with TypeScript's parser only (no type checker, so it takes about a second): the repository has no
// barrel files or `export *` chains for a type checker to see through. `src/index.ts` is the Worker's entry:
// everything it exports is used by the runtime.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ENTRIES = new Set(['src/index.ts']);
const SCANNED = ['src', 'test', 'scripts', 'dev', 'bench', 'views'];

/** Repository-relative paths of the files under `dir` whose names match `re` (node_modules and dist left out). */
function files(dir, re) {
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(join(ROOT, d), { withFileTypes: true })) {
      const p = `${d}/${e.name}`;
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && e.name !== 'dist') walk(p);
      } else if (re.test(e.name)) out.push(p);
    }
  };
  walk(dir);
  return out;
}

function exists(p) {
  try {
    return statSync(join(ROOT, p)).isFile();
  } catch {
    return false;
  }
}

/** The repository file a relative specifier names, as TypeScript and esbuild resolve it here. */
function resolveSpecifier(from, spec) {
  if (!spec.startsWith('.')) return null;
  const base = relative(ROOT, resolve(ROOT, dirname(from), spec.split('?')[0]));
  for (const p of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, base.replace(/\.js$/, '.ts')]) if (exists(p)) return p;
  return null;
}

const hasExport = (node) => ts.getModifiers?.(node)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) ?? false;

/** How often each identifier occurs in `sf`, declarations and export lists left out. */
function identifierUses(sf) {
  const counts = new Map();
  const visit = (node) => {
    if (ts.isIdentifier(node)) {
      const p = node.parent;
      const declared =
        p &&
        /** @type {{ name?: ts.Node }} */ (p).name === node &&
        (ts.isVariableDeclaration(p) ||
          ts.isFunctionDeclaration(p) ||
          ts.isClassDeclaration(p) ||
          ts.isInterfaceDeclaration(p) ||
          ts.isTypeAliasDeclaration(p) ||
          ts.isEnumDeclaration(p) ||
          ts.isExportSpecifier(p));
      if (!declared) counts.set(node.text, (counts.get(node.text) ?? 0) + 1);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return counts;
}

/** Names a source file exports, each with its line and whether the file itself uses it. */
function exportsOf(path, sf) {
  const out = [];
  const uses = identifierUses(sf);
  const add = (name, node) =>
    out.push({ name, line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1, usedInFile: (uses.get(name) ?? 0) > 0 });
  for (const st of sf.statements) {
    if (ts.isExportDeclaration(st) && !st.moduleSpecifier && st.exportClause && ts.isNamedExports(st.exportClause)) {
      for (const el of st.exportClause.elements) add(el.name.text, el);
    } else if (ts.isExportAssignment(st)) {
      add('default', st);
    } else if (hasExport(st)) {
      const isDefault = (ts.getModifiers(st) ?? []).some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
      if (isDefault) add('default', st);
      else if (ts.isVariableStatement(st)) {
        for (const d of st.declarationList.declarations) if (ts.isIdentifier(d.name)) add(d.name.text, d);
      } else if (st.name && ts.isIdentifier(st.name)) add(st.name.text, st);
    }
  }
  return out;
}

/** `used` gets `file#name` for each import of a named export, `file#*` when a whole module is taken. */
function collectUses(path, text, used) {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, path.endsWith('x') ? ts.ScriptKind.TSX : undefined);
  const visit = (node) => {
    const spec =
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)
        ? node.moduleSpecifier.text
        : null;
    const target = spec === null ? null : resolveSpecifier(path, spec);
    if (target && ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      if (!clause) used.add(`${target}#*`);
      else {
        if (clause.name) used.add(`${target}#default`);
        const b = clause.namedBindings;
        if (b && ts.isNamespaceImport(b)) used.add(`${target}#*`);
        if (b && ts.isNamedImports(b)) for (const el of b.elements) used.add(`${target}#${(el.propertyName ?? el.name).text}`);
      }
    } else if (target && ts.isExportDeclaration(node)) {
      if (!node.exportClause) used.add(`${target}#*`);
      else if (ts.isNamedExports(node.exportClause))
        for (const el of node.exportClause.elements) used.add(`${target}#${(el.propertyName ?? el.name).text}`);
    } else if (ts.isCallExpression(node) && node.arguments.length > 0 && ts.isStringLiteral(node.arguments[0])) {
      // import('./x') and vi.mock('./x'): the whole module.
      const callee = node.expression;
      const isImport = callee.kind === ts.SyntaxKind.ImportKeyword;
      const isMock = ts.isPropertyAccessExpression(callee) && callee.name.text === 'mock';
      const t = isImport || isMock ? resolveSpecifier(path, node.arguments[0].text) : null;
      if (t) used.add(`${t}#*`);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      const t = resolveSpecifier(path, node.argument.literal.text);
      if (t) used.add(node.qualifier && ts.isIdentifier(node.qualifier) ? `${t}#${node.qualifier.text}` : `${t}#*`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  // The Node tooling's importWorkerModules({ 'src/x.ts': ['a', 'b'] }) and importTs({ entry: 'src/x.ts' }).
  for (const m of text.matchAll(/'(src\/[\w./-]+\.tsx?)':\s*\[([^\]]*)\]/g)) {
    for (const n of m[2].matchAll(/'(\w+)'/g)) used.add(`${m[1]}#${n[1]}`);
  }
  for (const m of text.matchAll(/entry:\s*'(src\/[\w./-]+\.tsx?)'/g)) used.add(`${m[1]}#*`);
  return sf;
}

export function unusedExports() {
  const used = new Set();
  const sources = new Map();
  for (const dir of SCANNED) {
    for (const path of files(dir, /\.(ts|tsx|mjs|js)$/)) {
      if (path.endsWith('.d.ts')) continue;
      const sf = collectUses(path, readFileSync(join(ROOT, path), 'utf8'), used);
      if (path.startsWith('src/')) sources.set(path, sf);
    }
  }
  const findings = [];
  for (const [path, sf] of sources) {
    if (ENTRIES.has(path) || used.has(`${path}#*`)) continue;
    for (const { name, line, usedInFile } of exportsOf(path, sf)) {
      if (!usedInFile && !used.has(`${path}#${name}`)) findings.push(`${path}:${line} ${name}`);
    }
  }
  return findings.sort();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  const findings = unusedExports();
  if (findings.length > 0) {
    console.error(`unused exports (nothing imports them and their own file does not use them; delete them):\n${findings.join('\n')}`);
    process.exit(1);
  }
  console.log(`unused exports: none (${Date.now() - started} ms)`);
}
