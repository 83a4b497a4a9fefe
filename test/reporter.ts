// Prints the plain closing line CI reads: "N passed, N failed, N skipped". Under test/run.ts (one
// vitest per lane) it writes its counts to LHBOX_TEST_COUNTS instead, and the runner prints the line.
import { writeFileSync } from 'node:fs'
import type { Reporter, TestModule } from 'vitest/node'

export default class ClosingLine implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>, reason: string): void {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const mod of modules) {
      // A module that failed to load has no tests: count it as one failure.
      if (mod.state() === 'failed' && [...mod.children.allTests()].length === 0) failed++
      for (const test of mod.children.allTests()) {
        const state = test.result().state
        if (state === 'passed') passed++
        else if (state === 'failed') failed++
        else skipped++
      }
    }
    failed += errors.length
    // A run that failed outside any test (a global setup that threw) still counts as failed.
    if (reason !== 'passed' && failed === 0) failed = 1
    const countsFile = process.env.LHBOX_TEST_COUNTS
    if (countsFile) writeFileSync(countsFile, JSON.stringify({ passed, failed, skipped }))
    else process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`)
  }
}
