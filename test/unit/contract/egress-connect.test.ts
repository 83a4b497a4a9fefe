// The Node processes' connections to tenant-chosen hosts: undici's connector checks every DNS answer
// and every literal address before connecting. Name resolution is replaced (a public name answering a
// private address cannot be made on demand); the connections themselves are real, to loopback servers.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { egressAgent, type Resolve } from '../../../contract/egress-connect.ts'
import { EgressPolicy, WAREHOUSES } from '../../../contract/egress-policy.ts'

let server: Server
let port: number
let hits = 0

beforeAll(async () => {
  server = createServer((_req, res) => {
    hits++
    res.end('answered')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

/** Every name resolves to 127.0.0.1, where the test's server listens. */
const toLoopback: Resolve = (_host, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }])
/** One answer public, one private: every answer must pass. */
const mixed: Resolve = (_host, callback) =>
  callback(null, [
    { address: '93.184.216.34', family: 4 },
    { address: '127.0.0.1', family: 4 },
  ])

async function get(agent: ReturnType<typeof egressAgent>, url: string): Promise<string> {
  try {
    const res = await request(url, { dispatcher: agent })
    return `${res.statusCode} ${await res.body.text()}`
  } catch (err) {
    return (err as Error).message
  } finally {
    await agent.close()
  }
}

describe('egress agent', () => {
  it('refuses a public-looking name that resolves to loopback, and connects nowhere', async () => {
    const before = hits
    const answer = await get(egressAgent(new EgressPolicy([], WAREHOUSES), toLoopback), `http://store.example:${port}/`)
    expect(answer).toMatch(/^egress refused: 127\.0\.0\.1 is a loopback address \(store\.example resolves to it\); a warehouse’s endpoint/)
    expect(hits).toBe(before)
  })

  it('refuses a name when any of its answers is internal', async () => {
    const answer = await get(egressAgent(new EgressPolicy([], WAREHOUSES), mixed), `http://store.example:${port}/`)
    expect(answer).toMatch(/^egress refused: 127\.0\.0\.1 is a loopback address/)
  })

  it('refuses a literal internal address without a lookup', async () => {
    const before = hits
    const never: Resolve = () => {
      throw new Error('a literal address is not looked up')
    }
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]']) {
      expect(await get(egressAgent(new EgressPolicy([], WAREHOUSES), never), `http://${host}:${port}/`)).toMatch(/^egress refused: .*loopback/)
    }
    expect(hits).toBe(before)
  })

  it('connects where the policy opens: an allowed name, an allowed address', async () => {
    const before = hits
    expect(await get(egressAgent(new EgressPolicy(['store.internal'], WAREHOUSES), toLoopback), `http://store.internal:${port}/`)).toBe('200 answered')
    expect(await get(egressAgent(new EgressPolicy(['127.0.0.1'], WAREHOUSES)), `http://127.0.0.1:${port}/`)).toBe('200 answered')
    expect(hits).toBe(before + 2)
  })
})
