import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    reporters: ['default', './test/reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/integration/setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
          // One stack for the whole run; files share it, so run them one at a time.
          fileParallelism: false,
        },
      },
    ],
  },
})
