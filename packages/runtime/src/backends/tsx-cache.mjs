// tsx keeps compiled modules in a cache folder, <os.tmpdir()>/tsx-<uid>.
// A process under Node's permission model (the grader's sandbox) may be
// allowed to read that folder but not to write anything. tsx then still
// finds every module the folder holds, but on its first miss it creates the
// folder (mkdirSync, even when it exists) before writing the new entry, and
// a denied mkdir fails the compile. This module makes that one call a no-op
// when writing is denied; the entry's write itself already fails quietly in
// tsx, so a miss is simply compiled again next time.
//
// Import it in a thread before tsx registers there: the grader passes it with
// --import, every rank worker imports it in worker-boot.mjs. It changes
// nothing in a process that may write the folder, or that runs without the
// model.
import fs from 'node:fs';
import { register } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';

const user = process.geteuid ? process.geteuid() : os.userInfo().username;
const cacheDir = path.join(os.tmpdir(), `tsx-${user}`);

if (process.permission && !process.permission.has('fs.write', cacheDir)) {
  const mkdirSync = fs.mkdirSync;
  fs.mkdirSync = function mkdirSyncUnlessTsxCache(target, options) {
    if (path.resolve(String(target)) === cacheDir) return undefined;
    return mkdirSync.call(this, target, options);
  };
  // The main thread's ES-module loader compiles in a hooks thread: run there too (as
  // tsx-cache.mjs?hooks, which then has nothing more to do). Rank workers compile in their
  // own thread (worker-boot.mjs) and need no hooks thread.
  if (isMainThread && !import.meta.url.endsWith('?hooks')) register(`${import.meta.url}?hooks`);
}
