import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', '../scripts/vitest-count-reporter.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
  },
});
