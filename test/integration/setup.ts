// Integration global setup: the same stack as `npm run dev`, on free loopback ports in a temp
// folder, plus versitygw (a real S3 gateway) for the conformance tests. Stopped after the run.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { bootstrap } from '../../dev/bootstrap.ts'
import { freePort } from '../../dev/ports.ts'
import { startVersitygw } from '../../dev/s3.ts'
import { startStack } from '../../dev/stack.ts'
import type { StackInfo } from '../support/stack.ts'

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'lhbox-test-'))
  const secret = `test-secret-${Math.random().toString(36).slice(2)}`
  const stack = await startStack({ dir, bootstrapSecret: secret, bucket: 'lhbox-test' })
  let gateway: Awaited<ReturnType<typeof startVersitygw>> | undefined
  try {
    gateway = await startVersitygw(dir, await freePort(), 'lhbox-gw')
    const { apiKey, warehouse } = await bootstrap(stack.apiUrl, secret)
    const info: StackInfo = {
      dir,
      apiUrl: stack.apiUrl,
      databaseUrl: stack.databaseUrl,
      bootstrapSecret: secret,
      adminKey: apiKey,
      warehouse,
      s3: stack.s3,
      gateway: gateway.config,
      ports: stack.ports,
    }
    project.provide('stack', info)
  } catch (err) {
    await gateway?.child.stop()
    await stack.stop()
    throw err
  }
  return async () => {
    await gateway?.child.stop()
    await stack.stop()
    if (!process.env.LHBOX_KEEP_TEST_DIR) rmSync(dir, { recursive: true, force: true })
  }
}
