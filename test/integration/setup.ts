// Integration global setup: the same stack as `npm run dev`, on free loopback ports in a temp
// folder, plus versitygw (a real S3 gateway) for the conformance tests. Stopped after the run.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer } from 'node:http'
import type { TestProject } from 'vitest/node'
import { sqlCheckHandler } from '../../roller/feeds/sql-check.ts'
import { bootstrap } from '../../dev/bootstrap.ts'
import { stackPorts } from '../../dev/ports.ts'
import { buildRollerBundle, ROLLER_BUNDLE_ENV } from '../../dev/roller.ts'
import { startNodeEdgeChild } from '../../dev/node-edge.ts'
import type { Child } from '../../dev/process.ts'
import { startVersitygw } from '../../dev/s3.ts'
import { newSecretsKey, startStack } from '../../dev/stack.ts'
import { freePortRun, freePorts } from '../support/ports.ts'
import { startPythonForkServer } from '../support/python.ts'
import type { StackInfo } from '../support/stack.ts'

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'lhbox-test-'))
  const secret = `test-secret-${Math.random().toString(36).slice(2)}`
  const secretsKey = newSecretsKey()
  // Every roller of the run (the stack's service and the tests' children) starts from one bundle
  // (test/run.ts builds it once for both lanes: not rewritten here while the other lane runs it).
  process.env[ROLLER_BUNDLE_ENV] ??= await buildRollerBundle()
  // Its ports (LHBOX_DEV_PORT's layout) in a run checked free, below the ephemeral range: no connection
  // of the run takes one while the servers start (see test/support/ports.ts).
  const basePort = await freePortRun(Object.keys(await stackPorts(1)).length)
  // DuckDB's parser for the SQL sinks' create and PATCH, as the roller's port serves it (no roller service runs here).
  const checkPort = (await freePorts(1))[0]
  const sqlCheck = createServer(sqlCheckHandler(secret)).listen(checkPort, '127.0.0.1')
  const stack = await startStack({
    dir,
    basePort,
    bootstrapSecret: secret,
    secretsKey,
    bucket: 'lhbox-test',
    // A real S3 gateway (signatures verified, conditional writes honoured) under every test's roll,
    // not s3rver, a mock that may get listing order or metadata right by luck.
    store: 'versitygw',
    sqlCheckUrl: `http://127.0.0.1:${checkPort}/sql/check`,
  }).catch((err) => {
    sqlCheck.close()
    throw err
  })
  let gateway: Awaited<ReturnType<typeof startVersitygw>> | undefined
  let python: Awaited<ReturnType<typeof startPythonForkServer>> | undefined
  let nodeEdge: Child | undefined
  try {
    const [gatewayPort, nodeEdgePort] = await freePorts(2)
    gateway = await startVersitygw(dir, gatewayPort, 'lhbox-gw')
    // The same app on Node, on the same Postgres (directly: it keeps a pool) and store; the files
    // under test/integration/on-node/ run the edge tests against it.
    nodeEdge = await startNodeEdgeChild(dir, nodeEdgePort, { ...stack.edgeVars, DATABASE_URL: stack.databaseUrl })
    // The interop scripts' Python, imported once for the whole run (the workers inherit its socket's name).
    python = await startPythonForkServer(join(dir, 'python.sock'))
    const { apiKey, warehouse } = await bootstrap(stack.apiUrl, secret)
    const info: StackInfo = {
      dir,
      apiUrl: stack.apiUrl,
      nodeApiUrl: `http://127.0.0.1:${nodeEdgePort}`,
      databaseUrl: stack.databaseUrl,
      bootstrapSecret: secret,
      secretsKey,
      edgeVars: stack.edgeVars,
      adminKey: apiKey,
      warehouse,
      s3: stack.s3,
      gateway: gateway.config,
      ports: stack.ports,
    }
    project.provide('stack', info)
  } catch (err) {
    await nodeEdge?.stop()
    await python?.stop()
    await gateway?.child.stop()
    await stack.stop()
    sqlCheck.close()
    throw err
  }
  return async () => {
    await nodeEdge?.stop()
    await python?.stop()
    await gateway?.child.stop()
    await stack.stop()
    sqlCheck.close()
    if (!process.env.LHBOX_KEEP_TEST_DIR) rmSync(dir, { recursive: true, force: true })
  }
}
