// Lets a rank program anywhere in the dtlab repository import the workspace's
// packages by name (`@dtlab/tensor`, `@dtlab/runtime`, `@dtlab/collectives`...),
// even from a folder whose node_modules does not link them (a scratch file at
// the root, say). dtrun starts its process with `--require` of this module;
// worker threads inherit the flag (they do not run `--import` modules), so
// rank workers get it too.
//
// A name that resolves the usual way is left alone. One that does not, and is
// a workspace package's name, is resolved as that package would resolve it
// itself (a package may import its own name when its package.json has
// "exports"): once for ES modules (a resolve hook) and once for CommonJS,
// which tsx's require hook in the workers uses.
'use strict';
const { existsSync, readdirSync, readFileSync } = require('node:fs');
const Module = require('node:module');
const { dirname, join } = require('node:path');
const { pathToFileURL } = require('node:url');

/** The repository root: the nearest folder above this file with a pnpm-workspace.yaml. */
function workspaceRoot() {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return dir;
    if (dirname(dir) === dir) return null;
  }
}

/** Every workspace package, by name: its folder. The workspace file's globs are a folder or `folder/*`. */
function workspacePackages(root) {
  const globs = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8')
    .split('\n')
    .map((l) => /^\s*-\s*['"]?([^'"#\s]+)['"]?\s*$/.exec(l)?.[1])
    .filter(Boolean);
  const dirs = globs.flatMap((g) => {
    if (!g.endsWith('/*')) return [join(root, g)];
    const parent = join(root, g.slice(0, -2));
    return existsSync(parent) ? readdirSync(parent).map((n) => join(parent, n)) : [];
  });
  const byName = {};
  for (const dir of dirs) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const name = JSON.parse(readFileSync(file, 'utf8')).name;
    if (typeof name === 'string') byName[name] = dir;
  }
  return byName;
}

/** The workspace package a specifier names (`@dtlab/grader/grading` names `@dtlab/grader`), or undefined. */
function packageOf(specifier, packages) {
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return packages[name];
}

const root = workspaceRoot();
if (root) {
  const packages = workspacePackages(root);
  Module.register(pathToFileURL(join(__dirname, 'workspace-hooks.mjs')).href, { data: { packages } });
  // CommonJS: tsx's require hook (rank workers) resolves through Module._resolveFilename.
  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function resolveWorkspacePackage(request, parent, ...rest) {
    try {
      return resolveFilename.call(this, request, parent, ...rest);
    } catch (e) {
      const dir = e && e.code === 'MODULE_NOT_FOUND' ? packageOf(request, packages) : undefined;
      if (!dir) throw e;
      const self = new Module(join(dir, 'package.json'));
      self.filename = self.id;
      self.paths = Module._nodeModulePaths(dir);
      return resolveFilename.call(this, request, self, ...rest);
    }
  };
}
