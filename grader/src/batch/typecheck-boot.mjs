// The type-check worker's first module, in plain JavaScript: registers tsx's
// loader for this thread, then loads the TypeScript entry point.
import { register } from 'tsx/esm/api';

register();
await import('./typecheck-worker.ts');
