// tsx keeps compiled modules in a cache folder, <os.tmpdir()>/tsx-<uid>.
// A process under Node's permission model (the grader's sandbox) may be
// allowed to read that folder but not to write anything. tsx then still
// finds every module the folder holds, but on its first miss it creates the
// folder (mkdirSync, even when it exists) before writing the new entry, and
// a denied mkdir fails the compile. This module makes that one call a no-op
// when writing is denied; the entry's write itself already fails quietly in
// tsx, so a miss is simply compiled again next time.
//
// tsx compiles in the thread that runs module hooks, not in the thread that
// imports. So, imported in any thread before tsx registers (the grader passes
// it with --import; every rank worker imports it in worker-boot.mjs), this
// module registers itself as a hooks module too, to run there as well. It
// changes nothing in a process that may write the folder, or that runs
// without the model.
import fs from 'node:fs';
import { register } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const user = process.geteuid ? process.geteuid() : os.userInfo().username;
const cacheDir = path.join(os.tmpdir(), `tsx-${user}`);

if (process.permission && !process.permission.has('fs.write', cacheDir)) {
  const mkdirSync = fs.mkdirSync;
  fs.mkdirSync = function mkdirSyncUnlessTsxCache(target, options) {
    if (path.resolve(String(target)) === cacheDir) return undefined;
    return mkdirSync.call(this, target, options);
  };
  // In the hooks thread this module is loaded as tsx-cache.mjs?hooks and has nothing more to do.
  if (!import.meta.url.endsWith('?hooks')) register(`${import.meta.url}?hooks`);
}
