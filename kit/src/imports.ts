/**
 * What a source file imports: every module specifier in static imports,
 * re-exports, dynamic `import('...')` with a literal and `require('...')`,
 * read with the same parser as the policy check.
 */
import { parse } from '@babel/parser';

/** One module specifier and the line it is on. */
export interface ImportRef {
  specifier: string;
  line: number;
}

type Node = { type: string; loc?: { start: { line: number } }; [k: string]: unknown };

function stringValue(n: Node | undefined): string | null {
  if (!n) return null;
  if (n.type === 'StringLiteral') return n.value as string;
  if (n.type === 'TemplateLiteral' && (n.expressions as Node[]).length === 0) return ((n.quasis as Node[])[0]!.value as { cooked: string }).cooked;
  return null;
}

/** The module specifiers of `code` (TypeScript or JavaScript); throws on a syntax error. */
export function importsOf(code: string): ImportRef[] {
  const ast = parse(code, { sourceType: 'module', plugins: ['typescript'] }) as unknown as Node;
  const out: ImportRef[] = [];
  const add = (n: Node, spec: string | null) => {
    if (spec !== null) out.push({ specifier: spec, line: n.loc?.start.line ?? 0 });
  };
  const visit = (n: Node) => {
    if (n.type === 'ImportDeclaration' || n.type === 'ExportAllDeclaration' || (n.type === 'ExportNamedDeclaration' && n.source)) add(n, stringValue(n.source as Node));
    else if (n.type === 'ImportExpression') add(n, stringValue(n.source as Node));
    else if (n.type === 'CallExpression') {
      const callee = n.callee as Node;
      const isImport = callee.type === 'Import';
      const isRequire = callee.type === 'Identifier' && callee.name === 'require';
      if (isImport || isRequire) add(n, stringValue((n.arguments as Node[])[0]));
    }
    for (const [k, v] of Object.entries(n)) {
      if (k === 'loc' || k === 'start' || k === 'end' || k === 'extra' || k.endsWith('Comments')) continue;
      if (Array.isArray(v)) for (const c of v) if (c && typeof c === 'object' && typeof (c as Node).type === 'string') visit(c as Node);
      if (v && typeof v === 'object' && !Array.isArray(v) && typeof (v as Node).type === 'string') visit(v as Node);
    }
  };
  visit(ast.program as Node);
  return out;
}

/** The names a module exports (declarations and export lists), for checking a manifest's `entry.exports`. */
export function exportedNames(code: string): Set<string> {
  const ast = parse(code, { sourceType: 'module', plugins: ['typescript'] }) as unknown as Node;
  const names = new Set<string>();
  for (const s of (ast.program as Node).body as Node[]) {
    if (s.type === 'ExportDefaultDeclaration') names.add('default');
    if (s.type !== 'ExportNamedDeclaration') continue;
    const d = s.declaration as Node | null;
    if (d?.type === 'VariableDeclaration') for (const v of d.declarations as Node[]) if ((v.id as Node).type === 'Identifier') names.add((v.id as Node).name as string);
    if (d && (d.type === 'FunctionDeclaration' || d.type === 'ClassDeclaration' || d.type === 'TSEnumDeclaration') && d.id) names.add((d.id as Node).name as string);
    for (const sp of (s.specifiers as Node[] | undefined) ?? []) {
      const exported = sp.exported as Node;
      names.add(exported.type === 'Identifier' ? (exported.name as string) : (exported.value as string));
    }
  }
  return names;
}
