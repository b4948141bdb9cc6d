import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', '../../scripts/vitest-count-reporter.ts'],
    // The meter's memory points come out the same in every run only when V8 compiles on the thread
    // that asks (see the runtime's src/device/collect.ts): the memory tests rely on that.
    execArgv: ['--no-concurrent-recompilation', '--no-concurrent-osr', '--no-flush-bytecode'],
  },
});
