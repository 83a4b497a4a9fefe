// The Node processes' one door to hosts a tenant chose (a warehouse's store endpoint, its REST catalog):
// the edge on Node, the roller and its scan threads send every HTTP request through an undici agent
// whose connections are checked against an egress policy (egress-policy.ts) after DNS and before
// connecting, to the addresses checked — never to the name again, so a second DNS answer (rebinding)
// cannot swap one in. Literal addresses are checked first: Node connects to those without a lookup.
// Node-only: a Worker reaches public addresses only, and imports the policy alone.
import { type LookupAddress, lookup as dnsLookup } from 'node:dns'
import { isIP, type LookupFunction } from 'node:net'
import { Agent, buildConnector } from 'undici'
import type { EgressPolicy } from './egress-policy.ts'

/** A connection the policy refused; its message says which address and why. */
class EgressRefused extends Error {
  readonly code = 'EGRESS_REFUSED'
  constructor(reason: string) {
    super(`egress refused: ${reason}`)
    this.name = 'EgressRefused'
  }
}

/** Name resolution as node:dns's lookup with `all`; replaceable in the unit tests (a public name answering a private address). */
export type Resolve = (host: string, callback: (err: Error | null, addresses: LookupAddress[]) => void) => void

const resolveAll: Resolve = (host, callback) => dnsLookup(host, { all: true, verbatim: true }, callback)

/** undici's connector with every address checked: every DNS answer must pass, as for a SQL sink's proxy. */
function guardedConnector(policy: EgressPolicy, resolve: Resolve = resolveAll): buildConnector.connector {
  const lookup = ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    resolve(hostname, (err, addresses) => {
      if (err) return callback(err)
      if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} did not resolve`), { code: 'ENOTFOUND' }))
      for (const a of addresses) {
        const reason = policy.refusal(hostname, a.address)
        if (reason) return callback(new EgressRefused(reason))
      }
      if (options.all) callback(null, addresses)
      else callback(null, addresses[0].address, addresses[0].family)
    })
  }) as unknown as LookupFunction
  const connect = buildConnector({ lookup })
  return (options, callback) => {
    const host = options.hostname.replace(/^\[(.*)\]$/, '$1')
    const reason = isIP(host) ? policy.refusal(host, host) : null
    if (reason) return callback(new EgressRefused(reason), null)
    connect(options, callback)
  }
}

/** A keep-alive agent (as iceberg/io/s3-node.ts's own) whose connections pass the policy. */
export function egressAgent(policy: EgressPolicy, resolve?: Resolve): Agent {
  return new Agent({ keepAliveTimeout: 10_000, connections: 64, connect: guardedConnector(policy, resolve) })
}
