/**
 * `pnpm --filter @dtlab/tensor build:wasm`: assembles src/kernels/matmul.wat and
 * writes src/kernels/matmul-wasm-bytes.ts. Run it after editing the .wat, and
 * commit both files.
 */
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BYTES_PATH, expectedBytesModule } from './wasm-module.ts';

writeFileSync(BYTES_PATH, await expectedBytesModule());
console.log(`wrote ${relative(process.cwd(), BYTES_PATH)}`);
