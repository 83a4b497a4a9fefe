import { configDefaults, defineConfig } from 'vitest/config'
import { laneGlobs, laneOf } from './test/lanes.ts'

// npm test runs the integration files in two lanes at once (test/run.ts); `vitest run` alone runs them all on one stack.
const lane = laneGlobs(laneOf())

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
          include: lane.include,
          exclude: [...configDefaults.exclude, ...lane.exclude],
          environment: 'node',
          globalSetup: ['test/integration/setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
          // One stack for the lane; its files share it, so run them one at a time.
          fileParallelism: false,
        },
      },
    ],
  },
})
