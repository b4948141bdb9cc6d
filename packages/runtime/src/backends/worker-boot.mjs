// A rank worker's first module, in plain JavaScript: registers tsx's loader
// for this thread, then loads the TypeScript entry point (worker-main.ts).
import { register } from 'tsx/esm/api';

register();
await import('./worker-main.ts');
