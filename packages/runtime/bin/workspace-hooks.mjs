// The ES-module half of workspace-resolve.cjs: a resolve hook, run in the
// loader's own thread, for workspace package names that do not resolve the
// usual way (see workspace-resolve.cjs).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

let packages = {};

/** Receives the workspace's packages, by name, from register(). */
export function initialize(data) {
  packages = data?.packages ?? {};
}

function packageOf(specifier) {
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return packages[name];
}

export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (e) {
    const dir = e && e.code === 'ERR_MODULE_NOT_FOUND' ? packageOf(specifier) : undefined;
    if (!dir) throw e;
    // Resolved as the package itself would resolve its own name (its "exports").
    return nextResolve(specifier, { ...context, parentURL: pathToFileURL(join(dir, 'package.json')).href });
  }
}
