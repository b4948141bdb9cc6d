/**
 * The static policy check: reads a submission's source with a real parser
 * (@babel/parser with its TypeScript plugin) and reports every construct the
 * course does not allow, with file, line and column:
 *
 * - imports other than the manifest's allowlist and relative files inside src/
 *   (type-only imports are erased, so they are always allowed);
 * - dynamic `import()`, `require`, `eval`, `Function` and other ways to run code
 *   from strings or reach the host (`process`, `globalThis`, `Worker`, `fetch`...);
 * - patching globals, prototypes or imported bindings (`Math.random = ...`,
 *   `Float32Array.prototype.set = ...`, `Object.defineProperty(Tensor.prototype, ...)`),
 *   and reaching constructors through `.constructor`.
 *
 * It is one layer of defence; the real one is that student code runs only in
 * rank workers inside a grading process that is killed at its time limit.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { parse } from '@babel/parser';
import type * as t from '@babel/types';
import { sourceFiles, syntaxOf } from './source-files.ts';
import { formatViolations, type PolicyViolation } from './policy-violation.ts';

export { sourceFiles };
export { formatViolations, type PolicyViolation };

const HOST_GLOBALS = new Set([
  'process', 'globalThis', 'global', 'require', 'module', 'exports', '__dirname', '__filename',
  'eval', 'Function', 'Worker', 'SharedWorker', 'fetch', 'XMLHttpRequest', 'WebSocket', 'EventSource', 'importScripts', 'Deno', 'Bun',
  // Channels to other threads: ranks talk only through their Comm, whose every message the fabric sees.
  'BroadcastChannel', 'MessageChannel', 'MessagePort', 'EventTarget',
]);

const BUILTINS = new Set([
  'Math', 'Object', 'Array', 'Number', 'String', 'Boolean', 'Symbol', 'BigInt', 'JSON', 'Promise', 'Reflect', 'Proxy',
  'Date', 'RegExp', 'Error', 'TypeError', 'RangeError', 'Map', 'Set', 'WeakMap', 'WeakSet', 'ArrayBuffer', 'SharedArrayBuffer',
  'DataView', 'Atomics', 'console', 'performance', 'setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask', 'structuredClone',
  'Float32Array', 'Float64Array', 'Int8Array', 'Int16Array', 'Int32Array', 'Uint8Array', 'Uint8ClampedArray', 'Uint16Array',
  'Uint32Array', 'BigInt64Array', 'BigUint64Array', 'Intl', 'WebAssembly',
]);

const PATCHING_CALLS = new Set([
  'Object.defineProperty', 'Object.defineProperties', 'Object.setPrototypeOf', 'Object.assign',
  'Reflect.set', 'Reflect.defineProperty', 'Reflect.setPrototypeOf', 'Reflect.deleteProperty',
]);

/** A syntax node of the type `K`. */
type NodeOf<K extends t.Node['type']> = Extract<t.Node, { type: K }>;

/** Where the walk is, and what it knows of the file so far: what a rule reads besides its node. */
interface Walk {
  parent: t.Node | null;
  /** The key of `parent` the node sits under ('property', 'key', 'callee'...). */
  key: string;
  /** Functions the walk is inside: an await outside every function is a top-level await. */
  functionDepth: number;
  /** Local names bound by the file's (non-type) imports: patching them is patching imported code. */
  imported: Set<string>;
  report(n: t.Node, rule: PolicyViolation['rule'], message: string): void;
}

/** A rule returns SKIP when nothing inside its node needs a look. */
const SKIP = Symbol('skip the children');
type Rule<N extends t.Node> = (n: N, walk: Walk) => void | typeof SKIP;

/**
 * The rules, keyed by the syntax node type each applies to: a node whose type
 * has no rule is only walked through. Adding a construct to forbid is adding
 * an entry here.
 */
type RuleTable = { [K in t.Node['type']]?: Rule<NodeOf<K>> };

/** Walks `root` depth first, calling the rule for each node's type. */
function walkWith(rules: RuleTable, root: t.Node, walk: Walk): void {
  const visit = (n: t.Node, parent: t.Node | null, key: string): void => {
    walk.parent = parent;
    walk.key = key;
    const rule = rules[n.type] as Rule<t.Node> | undefined;
    if (rule?.(n, walk) === SKIP) return;
    const isFunction = FUNCTIONS.has(n.type);
    if (isFunction) walk.functionDepth++;
    forEachChild(n, visit);
    if (isFunction) walk.functionDepth--;
  };
  visit(root, null, 'program');
}

const FUNCTIONS = new Set<t.Node['type']>(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression', 'ObjectMethod', 'ClassMethod', 'ClassPrivateMethod']);

/** The rule broken by a reference to a host global: running code from strings, or reaching the host. */
const hostRule = (name: string): PolicyViolation['rule'] => (name === 'eval' || name === 'Function' ? 'dynamic-code' : 'host-access');

/** The location fields of a violation at `n`. */
const place = (n: t.Node) => ({ line: n.loc?.start.line ?? 0, column: (n.loc?.start.column ?? 0) + 1 });

/** Calls `f` on each syntax-node child of `n`, with the key it sits under. */
function forEachChild(n: t.Node, f: (child: t.Node, parent: t.Node, key: string) => void): void {
  for (const [k, v] of Object.entries(n)) {
    if (k === 'loc' || k === 'start' || k === 'end' || k === 'extra' || k === 'leadingComments' || k === 'trailingComments' || k === 'innerComments') continue;
    if (Array.isArray(v)) {
      for (const c of v) if (isNode(c)) f(c, n, k);
    } else if (isNode(v)) f(v, n, k);
  }
}

function isNode(v: unknown): v is t.Node {
  return typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string';
}

// Identifiers in these positions are names, not references to globals.
function isNameOnly(parent: t.Node | null, key: string): boolean {
  if (!parent) return false;
  if ((parent.type === 'MemberExpression' || parent.type === 'OptionalMemberExpression') && key === 'property' && !parent.computed) return true;
  if ((parent.type === 'ObjectProperty' || parent.type === 'ObjectMethod' || parent.type === 'ClassProperty' || parent.type === 'ClassMethod' || parent.type === 'TSPropertySignature' || parent.type === 'ClassPrivateProperty') && key === 'key' && !('computed' in parent && parent.computed)) return true;
  if (parent.type.startsWith('TS') && parent.type !== 'TSNonNullExpression' && parent.type !== 'TSAsExpression' && parent.type !== 'TSSatisfiesExpression' && parent.type !== 'TSTypeAssertion') return true;
  if (parent.type === 'ImportSpecifier' || parent.type === 'ExportSpecifier' || parent.type === 'LabeledStatement' || parent.type === 'BreakStatement' || parent.type === 'ContinueStatement') return true;
  return false;
}

/** Names that compiled CommonJS code uses for its own module, as the compiler emits them: allowed there. */
const COMPILED_MODULE_NAMES = new Set(['require', 'module', 'exports', '__filename', '__dirname']);

/** The rules for compiled code (checkCompiled): references to the host, and dynamic import. */
function compiledRules(file: string): RuleTable {
  const dynamicImport: Rule<t.Node> = (n, w) => w.report(n, 'dynamic-code', `dynamic import() is not allowed (in the compiled code of ${file})`);
  return {
    Identifier: (n, w) => {
      if (HOST_GLOBALS.has(n.name) && !COMPILED_MODULE_NAMES.has(n.name) && !isNameOnly(w.parent, w.key)) {
        w.report(n, hostRule(n.name), `'${n.name}' is not allowed in a submission (it is in the compiled code of ${file}: a JSX tag or a construct the compiler turned into it)`);
      }
    },
    ImportExpression: dynamicImport,
    Import: dynamicImport,
  };
}

/**
 * Checks compiled code (what the compiler made of `file`: CommonJS, as it
 * runs) for references to the host: the same rule as for the source, with
 * the compiled module's own require, module and exports allowed (they are the
 * confined ones). The source is read as the compiler reads it, but two
 * parsers can still differ; the compiled code is what runs, so it is read
 * too. A JSX tag `<Function />` is `Function` here, whatever the source said.
 */
export function checkCompiled(code: string, file: string): PolicyViolation[] {
  const out: PolicyViolation[] = [];
  let ast: t.File;
  try {
    ast = parse(code, { sourceType: 'script', allowReturnOutsideFunction: false, errorRecovery: false });
  } catch (e) {
    out.push({ file, line: 0, column: 0, rule: 'syntax', message: `the compiled code could not be read: ${(e as Error).message}` });
    return out;
  }
  walkWith(compiledRules(file), ast.program, newWalk(file, out));
  return out;
}

function newWalk(file: string, out: PolicyViolation[]): Walk {
  return {
    parent: null,
    key: 'program',
    functionDepth: 0,
    imported: new Set(),
    report: (n, rule, message) => out.push({ file, ...place(n), rule, message }),
  };
}

/** The member name of `n` when it is static (`a.b`, `a['b']`), else null. */
function memberName(n: t.MemberExpression | t.OptionalMemberExpression): string | null {
  const p = n.property;
  if (!n.computed && p.type === 'Identifier') return p.name;
  if (p.type === 'StringLiteral') return p.value;
  return null;
}

/** The object at the root of a member chain (`a` of `a.b!.c`), through non-null and `as`. */
function rootOf(n: t.Node): t.Node {
  let x = n;
  while (x.type === 'MemberExpression' || x.type === 'OptionalMemberExpression' || x.type === 'TSNonNullExpression' || x.type === 'TSAsExpression') {
    x = x.type === 'TSNonNullExpression' || x.type === 'TSAsExpression' ? x.expression : x.object;
  }
  return x;
}

function touchesPrototype(n: t.Node): boolean {
  for (let x = n; x.type === 'MemberExpression' || x.type === 'OptionalMemberExpression'; x = x.object) {
    const name = memberName(x);
    if (name === 'prototype' || name === '__proto__') return true;
  }
  return false;
}

/** What writing to `target` would patch (a prototype, a built-in, an import), or null when it patches nothing shared. */
function patchTarget(target: t.Node, imported: Set<string>): string | null {
  if (target.type !== 'MemberExpression' && target.type !== 'OptionalMemberExpression') return null;
  const root = rootOf(target);
  if (touchesPrototype(target)) return 'a prototype';
  if (root.type === 'Identifier' && BUILTINS.has(root.name)) return `the built-in ${root.name}`;
  if (root.type === 'Identifier' && imported.has(root.name)) return `the imported ${root.name}`;
  return null;
}

/** `Object.defineProperty` for a callee `Object.defineProperty`; null for anything else. */
function calleeName(c: t.Node): string | null {
  return c.type === 'MemberExpression' && c.object.type === 'Identifier' ? `${c.object.name}.${memberName(c) ?? '?'}` : null;
}

/** The rules for a submission's source (checkSource). Import sources are checked against `allowedImports` and `srcDir`. */
function sourceRules(srcDir: string, absFile: string, allowedImports: readonly string[]): RuleTable {
  const importSource = (n: t.Node, spec: string, typeOnly: boolean, w: Walk) => {
    if (typeOnly) return;
    if (spec.startsWith('./') || spec.startsWith('../')) {
      const target = resolve(dirname(absFile), spec);
      if (target !== srcDir && !target.startsWith(srcDir + sep)) w.report(n, 'import', `import of '${spec}' leaves the submission's src/ folder`);
      return;
    }
    if (!allowedImports.includes(spec)) {
      w.report(n, 'import', `import of '${spec}' is not allowed in this exercise (allowed: ${allowedImports.join(', ') || 'only files in src/'})`);
    }
  };
  const TOP_LEVEL_AWAIT = "top-level 'await' is not allowed: the grader loads submissions as CommonJS modules, which cannot wait; await inside your exported function instead";
  const DYNAMIC_IMPORT = 'dynamic import() is not allowed: import modules statically at the top of the file';
  // A thenable's `then` runs in a job V8 makes for the promise resolved with it, timed as the stream that made
  // that promise rather than the one that resolved it (the runtime README, "the clock follows waits").
  const THENABLE = "a property named 'then' is not allowed: an object with a then method is a thenable, whose then() the virtual clock times on the stream of the promise it resolves, not on the one that ran it; use promises and async functions";
  const keyIsThen = (n: { key: t.Node; computed?: boolean }) => (n.key.type === 'Identifier' && !n.computed && n.key.name === 'then') || (n.key.type === 'StringLiteral' && n.key.value === 'then');
  const thenKey: Rule<t.ObjectProperty | t.ObjectMethod | t.ClassProperty | t.ClassMethod> = (n, w) => {
    if (keyIsThen(n)) w.report(n, 'patching', THENABLE);
  };
  const member: Rule<t.MemberExpression | t.OptionalMemberExpression> = (n, w) => {
    if (memberName(n) === 'constructor') w.report(n, 'dynamic-code', "reaching a constructor through '.constructor' is not allowed");
    if (memberName(n) === '__proto__') w.report(n, 'patching', "'__proto__' is not allowed");
  };
  const assignment: Rule<t.AssignmentExpression | t.UpdateExpression> = (n, w) => {
    const target = n.type === 'AssignmentExpression' ? n.left : n.argument;
    if ((target.type === 'MemberExpression' || target.type === 'OptionalMemberExpression') && memberName(target) === 'then') w.report(n, 'patching', THENABLE);
    const what = patchTarget(target, w.imported);
    if (what) w.report(n, 'patching', `assigning to a property of ${what} is not allowed: submissions must not patch globals, prototypes or imported code`);
  };
  const call: Rule<t.CallExpression | t.OptionalCallExpression> = (n, w) => {
    const name = calleeName(n.callee);
    if (!name || !PATCHING_CALLS.has(name)) return;
    const first = n.arguments[0];
    const what = first ? (first.type === 'Identifier' && (BUILTINS.has(first.name) || w.imported.has(first.name)) ? first.name : patchTarget(first, w.imported)) : null;
    if (what) w.report(n, 'patching', `${name} on ${what} is not allowed: submissions must not patch globals, prototypes or imported code`);
  };
  return {
    ObjectProperty: thenKey,
    ObjectMethod: thenKey,
    ClassProperty: thenKey,
    ClassMethod: thenKey,
    AwaitExpression: (n, w) => {
      if (w.functionDepth === 0) w.report(n, 'top-level-await', TOP_LEVEL_AWAIT);
    },
    ForOfStatement: (n, w) => {
      if (w.functionDepth === 0 && n.await) w.report(n, 'top-level-await', TOP_LEVEL_AWAIT);
    },
    ImportDeclaration: (n, w) => {
      importSource(n, n.source.value, n.importKind === 'type', w);
      return SKIP; // nothing inside an import needs a look (its bindings were collected before the walk)
    },
    ExportNamedDeclaration: (n, w) => {
      if (n.source) importSource(n, n.source.value, n.exportKind === 'type', w);
    },
    ExportAllDeclaration: (n, w) => importSource(n, n.source.value, n.exportKind === 'type', w),
    ImportExpression: (n, w) => w.report(n, 'dynamic-code', DYNAMIC_IMPORT),
    Import: (n, w) => w.report(n, 'dynamic-code', DYNAMIC_IMPORT),
    TSImportEqualsDeclaration: (n, w) => {
      w.report(n, 'import', '`import x = require(...)` is not allowed: use an ES import from the allowlist');
      return SKIP;
    },
    MetaProperty: (n, w) => {
      if (n.meta.name === 'import') w.report(n, 'host-access', 'import.meta is not allowed');
    },
    Identifier: (n, w) => {
      if (HOST_GLOBALS.has(n.name) && !isNameOnly(w.parent, w.key)) {
        w.report(n, hostRule(n.name), `'${n.name}' is not allowed in a submission${n.name === 'process' ? ' (use comm.rank and comm.worldSize; rank programs must not touch the process)' : ''}`);
      }
    },
    JSXOpeningElement: (n, w) => {
      // `<Function />` compiles to a call with Function itself: a tag name is a reference.
      let name: t.JSXOpeningElement['name'] = n.name;
      while (name.type === 'JSXMemberExpression') name = name.object;
      if (name.type === 'JSXIdentifier' && HOST_GLOBALS.has(name.name)) {
        w.report(name, hostRule(name.name), `'${name.name}' is not allowed in a submission (as a JSX tag it is a reference to it)`);
      }
    },
    MemberExpression: member,
    OptionalMemberExpression: member,
    AssignmentExpression: assignment,
    UpdateExpression: assignment,
    UnaryExpression: (n, w) => {
      if (n.operator !== 'delete') return;
      const what = patchTarget(n.argument, w.imported);
      if (what) w.report(n, 'patching', `deleting a property of ${what} is not allowed`);
    },
    CallExpression: call,
    OptionalCallExpression: call,
  };
}

/**
 * Checks every source file under `srcDir` (each file the compiler compiles:
 * source-files.ts) against the policy; returns the violations (empty: allowed).
 */
export function checkPolicy(srcDir: string, allowedImports: readonly string[]): PolicyViolation[] {
  const violations: PolicyViolation[] = [];
  for (const file of sourceFiles(srcDir)) {
    violations.push(...checkSource(readFileSync(join(srcDir, file), 'utf8'), join('src', file), srcDir, join(srcDir, file), allowedImports));
  }
  return violations;
}

/** Checks one file's source text. `absFile` locates relative imports; they must stay inside `srcDir`. */
export function checkSource(code: string, file: string, srcDir: string, absFile: string, allowedImports: readonly string[]): PolicyViolation[] {
  const out: PolicyViolation[] = [];
  let ast: t.File;
  try {
    // Parsed as the compiler reads it (source-files.ts): TypeScript or not, JSX or not, by extension.
    const syntax = syntaxOf(file) ?? { typescript: true, jsx: false };
    const plugins: ('typescript' | 'jsx')[] = [...(syntax.typescript ? (['typescript'] as const) : []), ...(syntax.jsx ? (['jsx'] as const) : [])];
    ast = parse(code, { sourceType: 'module', plugins, errorRecovery: false });
  } catch (e) {
    const err = e as Error & { loc?: { line: number; column: number } };
    out.push({ file, line: err.loc?.line ?? 0, column: (err.loc?.column ?? 0) + 1, rule: 'syntax', message: `syntax error: ${err.message.replace(/\s*\(\d+:\d+\)$/, '')}` });
    return out;
  }
  const walk = newWalk(file, out);
  // Import bindings first, so that the patching rules know them wherever they appear.
  for (const s of ast.program.body) {
    if (s.type === 'ImportDeclaration' && s.importKind !== 'type') for (const sp of s.specifiers) walk.imported.add(sp.local.name);
  }
  walkWith(sourceRules(srcDir, absFile, allowedImports), ast.program, walk);
  return out;
}
