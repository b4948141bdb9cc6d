// tsx keeps compiled modules in a cache folder, <os.tmpdir()>/tsx-<uid>.
// A process under Node's permission model (the grader's sandbox) may be
// allowed to read that folder but not to write anything. tsx then still
// finds every module the folder holds, but on its first miss it creates the
// folder (mkdirSync, even when it exists) before writing the new entry, and
// a denied mkdir fails the compile. Loading this module makes that one call
// a no-op in this thread when writing is denied; the entry's write itself
// already fails quietly in tsx, so a miss is simply compiled again next time.
//
// Load it in a thread before tsx registers there: rank workers require it
// first thing (see pool.ts); a process imports tsx-cache.mjs, which loads it
// in the main thread and in the ES-module loader's hooks thread. It changes
// nothing in a process that may write the folder, or that runs without the
// model.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const user = process.geteuid ? process.geteuid() : os.userInfo().username;
const cacheDir = path.join(os.tmpdir(), `tsx-${user}`);

/** Whether this process may not write the cache, so that the guard is on. */
const guarded = Boolean(process.permission && !process.permission.has('fs.write', cacheDir));
module.exports = { guarded };

if (guarded) {
  const mkdirSync = fs.mkdirSync;
  fs.mkdirSync = function mkdirSyncUnlessTsxCache(target, options) {
    if (path.resolve(String(target)) === cacheDir) return undefined;
    return mkdirSync.call(this, target, options);
  };
}
