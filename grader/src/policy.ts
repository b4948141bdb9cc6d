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
import { sourceFiles, syntaxOf } from './source-files.ts';

export { sourceFiles };

/** One rule broken at one place. */
export interface PolicyViolation {
  file: string;
  line: number;
  column: number;
  rule: 'import' | 'dynamic-code' | 'host-access' | 'patching' | 'top-level-await' | 'syntax';
  message: string;
}

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

type Node = { type: string; loc?: { start: { line: number; column: number } }; [k: string]: unknown };

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

/** Names that compiled CommonJS code uses for its own module, as the compiler emits them: allowed there. */
const COMPILED_MODULE_NAMES = new Set(['require', 'module', 'exports', '__filename', '__dirname']);

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
  let ast: Node;
  try {
    ast = parse(code, { sourceType: 'script', allowReturnOutsideFunction: false, errorRecovery: false }) as unknown as Node;
  } catch (e) {
    out.push({ file, line: 0, column: 0, rule: 'syntax', message: `the compiled code could not be read: ${(e as Error).message}` });
    return out;
  }
  const visit = (n: Node, parent: Node | null, key: string) => {
    if (n.type === 'Identifier' && HOST_GLOBALS.has(n.name as string) && !COMPILED_MODULE_NAMES.has(n.name as string) && !isNameOnly(parent, key)) {
      out.push({ file, line: n.loc?.start.line ?? 0, column: (n.loc?.start.column ?? 0) + 1, rule: n.name === 'eval' || n.name === 'Function' ? 'dynamic-code' : 'host-access', message: `'${n.name as string}' is not allowed in a submission (it is in the compiled code of ${file}: a JSX tag or a construct the compiler turned into it)` });
    }
    if (n.type === 'ImportExpression' || n.type === 'Import') out.push({ file, line: n.loc?.start.line ?? 0, column: 0, rule: 'dynamic-code', message: `dynamic import() is not allowed (in the compiled code of ${file})` });
    forEachChild(n, visit);
  };
  visit(ast.program as Node, null, 'program');
  return out;
}

/** Calls `f` on each syntax-node child of `n`, with the key it sits under. */
function forEachChild(n: Node, f: (child: Node, parent: Node, key: string) => void): void {
  for (const [k, v] of Object.entries(n)) {
    if (k === 'loc' || k === 'start' || k === 'end' || k === 'extra' || k === 'leadingComments' || k === 'trailingComments' || k === 'innerComments') continue;
    if (Array.isArray(v)) {
      for (const c of v) if (c && typeof c === 'object' && typeof (c as Node).type === 'string') f(c as Node, n, k);
    } else if (v && typeof v === 'object' && typeof (v as Node).type === 'string') f(v as Node, n, k);
  }
}

// Identifiers in these positions are names, not references to globals.
function isNameOnly(parent: Node | null, key: string): boolean {
  if (!parent) return false;
  if ((parent.type === 'MemberExpression' || parent.type === 'OptionalMemberExpression') && key === 'property' && !parent.computed) return true;
  if ((parent.type === 'ObjectProperty' || parent.type === 'ObjectMethod' || parent.type === 'ClassProperty' || parent.type === 'ClassMethod' || parent.type === 'TSPropertySignature' || parent.type === 'ClassPrivateProperty') && key === 'key' && !parent.computed) return true;
  if (parent.type.startsWith('TS') && parent.type !== 'TSNonNullExpression' && parent.type !== 'TSAsExpression' && parent.type !== 'TSSatisfiesExpression' && parent.type !== 'TSTypeAssertion') return true;
  if (parent.type === 'ImportSpecifier' || parent.type === 'ExportSpecifier' || parent.type === 'LabeledStatement' || parent.type === 'BreakStatement' || parent.type === 'ContinueStatement') return true;
  return false;
}

/** Checks one file's source text. `absFile` locates relative imports; they must stay inside `srcDir`. */
export function checkSource(code: string, file: string, srcDir: string, absFile: string, allowedImports: readonly string[]): PolicyViolation[] {
  const out: PolicyViolation[] = [];
  const at = (n: Node, rule: PolicyViolation['rule'], message: string) =>
    out.push({ file, line: n.loc?.start.line ?? 0, column: (n.loc?.start.column ?? 0) + 1, rule, message });
  let ast: Node;
  try {
    // Parsed as the compiler reads it (source-files.ts): TypeScript or not, JSX or not, by extension.
    const syntax = syntaxOf(file) ?? { typescript: true, jsx: false };
    const plugins: ('typescript' | 'jsx')[] = [...(syntax.typescript ? (['typescript'] as const) : []), ...(syntax.jsx ? (['jsx'] as const) : [])];
    ast = parse(code, { sourceType: 'module', plugins, errorRecovery: false }) as unknown as Node;
  } catch (e) {
    const err = e as Error & { loc?: { line: number; column: number } };
    out.push({ file, line: err.loc?.line ?? 0, column: (err.loc?.column ?? 0) + 1, rule: 'syntax', message: `syntax error: ${err.message.replace(/\s*\(\d+:\d+\)$/, '')}` });
    return out;
  }
  const imported = new Set<string>();

  const checkSourceSpec = (n: Node, spec: string, typeOnly: boolean) => {
    if (typeOnly) return;
    if (spec.startsWith('./') || spec.startsWith('../')) {
      const target = resolve(dirname(absFile), spec);
      if (target !== srcDir && !target.startsWith(srcDir + sep)) at(n, 'import', `import of '${spec}' leaves the submission's src/ folder`);
      return;
    }
    if (!allowedImports.includes(spec)) {
      at(n, 'import', `import of '${spec}' is not allowed in this exercise (allowed: ${allowedImports.join(', ') || 'only files in src/'})`);
    }
  };

  const rootOf = (n: Node): Node => {
    let x = n;
    while (x.type === 'MemberExpression' || x.type === 'OptionalMemberExpression' || x.type === 'TSNonNullExpression' || x.type === 'TSAsExpression') {
      x = (x.type === 'TSNonNullExpression' || x.type === 'TSAsExpression' ? x.expression : x.object) as Node;
    }
    return x;
  };
  const memberName = (n: Node): string | null => {
    const p = n.property as Node;
    if (!n.computed && p.type === 'Identifier') return p.name as string;
    if (p.type === 'StringLiteral') return p.value as string;
    return null;
  };
  const touchesPrototype = (n: Node): boolean => {
    for (let x = n; x.type === 'MemberExpression' || x.type === 'OptionalMemberExpression'; x = x.object as Node) {
      const name = memberName(x);
      if (name === 'prototype' || name === '__proto__') return true;
    }
    return false;
  };
  const patchTarget = (target: Node): string | null => {
    if (target.type !== 'MemberExpression' && target.type !== 'OptionalMemberExpression') return null;
    const root = rootOf(target);
    if (touchesPrototype(target)) return 'a prototype';
    if (root.type === 'Identifier' && BUILTINS.has(root.name as string)) return `the built-in ${root.name as string}`;
    if (root.type === 'Identifier' && imported.has(root.name as string)) return `the imported ${root.name as string}`;
    return null;
  };
  const calleeName = (c: Node): string | null =>
    c.type === 'MemberExpression' && (c.object as Node).type === 'Identifier' ? `${(c.object as Node).name as string}.${memberName(c) ?? '?'}` : null;

  // Functions the walk is inside: an await outside every function is a top-level await.
  let functionDepth = 0;
  const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression', 'ObjectMethod', 'ClassMethod', 'ClassPrivateMethod']);

  const visit = (n: Node, parent: Node | null, key: string) => {
    switch (n.type) {
      case 'AwaitExpression':
      case 'ForOfStatement':
        if (functionDepth === 0 && (n.type === 'AwaitExpression' || n.await)) {
          at(n, 'top-level-await', "top-level 'await' is not allowed: the grader loads submissions as CommonJS modules, which cannot wait; await inside your exported function instead");
        }
        break;
      case 'ImportDeclaration': {
        const typeOnly = n.importKind === 'type';
        checkSourceSpec(n, (n.source as Node).value as string, typeOnly);
        if (!typeOnly) for (const s of n.specifiers as Node[]) imported.add((s.local as Node).name as string);
        return; // nothing inside an import needs a look
      }
      case 'ExportNamedDeclaration':
      case 'ExportAllDeclaration':
        if (n.source) checkSourceSpec(n, (n.source as Node).value as string, n.exportKind === 'type');
        break;
      case 'ImportExpression':
        at(n, 'dynamic-code', 'dynamic import() is not allowed: import modules statically at the top of the file');
        break;
      case 'Import':
        at(n, 'dynamic-code', 'dynamic import() is not allowed: import modules statically at the top of the file');
        break;
      case 'TSImportEqualsDeclaration':
        at(n, 'import', '`import x = require(...)` is not allowed: use an ES import from the allowlist');
        return;
      case 'MetaProperty':
        if ((n.meta as Node).name === 'import') at(n, 'host-access', 'import.meta is not allowed');
        break;
      case 'Identifier':
        if (HOST_GLOBALS.has(n.name as string) && !isNameOnly(parent, key)) {
          at(n, n.name === 'eval' || n.name === 'Function' ? 'dynamic-code' : 'host-access', `'${n.name as string}' is not allowed in a submission${n.name === 'process' ? ' (use comm.rank and comm.worldSize; rank programs must not touch the process)' : ''}`);
        }
        break;
      case 'JSXOpeningElement': {
        // `<Function />` compiles to a call with Function itself: a tag name is a reference.
        let name = n.name as Node;
        while (name.type === 'JSXMemberExpression') name = name.object as Node;
        if (name.type === 'JSXIdentifier' && HOST_GLOBALS.has(name.name as string)) {
          at(name, name.name === 'eval' || name.name === 'Function' ? 'dynamic-code' : 'host-access', `'${name.name as string}' is not allowed in a submission (as a JSX tag it is a reference to it)`);
        }
        break;
      }
      case 'MemberExpression':
      case 'OptionalMemberExpression':
        if (memberName(n) === 'constructor') at(n, 'dynamic-code', "reaching a constructor through '.constructor' is not allowed");
        if (memberName(n) === '__proto__') at(n, 'patching', "'__proto__' is not allowed");
        break;
      case 'AssignmentExpression':
      case 'UpdateExpression': {
        const target = (n.type === 'AssignmentExpression' ? n.left : n.argument) as Node;
        const what = patchTarget(target);
        if (what) at(n, 'patching', `assigning to a property of ${what} is not allowed: submissions must not patch globals, prototypes or imported code`);
        break;
      }
      case 'UnaryExpression':
        if (n.operator === 'delete') {
          const what = patchTarget(n.argument as Node);
          if (what) at(n, 'patching', `deleting a property of ${what} is not allowed`);
        }
        break;
      case 'CallExpression':
      case 'OptionalCallExpression': {
        const callee = n.callee as Node;
        if (callee.type === 'Import') break;
        const name = calleeName(callee);
        if (name && PATCHING_CALLS.has(name)) {
          const first = (n.arguments as Node[])[0];
          const what = first ? (first.type === 'Identifier' && (BUILTINS.has(first.name as string) || imported.has(first.name as string)) ? `${first.name as string}` : patchTarget(first)) : null;
          if (what) at(n, 'patching', `${name} on ${what} is not allowed: submissions must not patch globals, prototypes or imported code`);
        }
        break;
      }
    }
    const isFunction = FUNCTIONS.has(n.type);
    if (isFunction) functionDepth++;
    forEachChild(n, visit);
    if (isFunction) functionDepth--;
  };
  // Collect import bindings first so that patching checks know them wherever they appear.
  for (const s of (ast.program as Node).body as Node[]) {
    if (s.type === 'ImportDeclaration' && s.importKind !== 'type') for (const sp of s.specifiers as Node[]) imported.add((sp.local as Node).name as string);
  }
  visit(ast.program as Node, null, 'program');
  return out;
}

/** One line per violation: `src/x.ts:12:5 import of 'node:fs' is not allowed ...`. */
export function formatViolations(v: readonly PolicyViolation[], max = 10): string {
  const lines = v.slice(0, max).map((x) => `${x.file}:${x.line}:${x.column} ${x.message}`);
  if (v.length > max) lines.push(`... and ${v.length - max} more`);
  return lines.join('\n');
}
