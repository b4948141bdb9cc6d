// A rank worker's first module, in plain JavaScript: registers tsx's loader
// for this thread, then loads the TypeScript entry point (worker-main.ts).
// tsx-cache.mjs first, so that a sandboxed worker can use a read-only cache.
import './tsx-cache.mjs';
import { register } from 'tsx/esm/api';

register();
await import('./worker-main.ts');
