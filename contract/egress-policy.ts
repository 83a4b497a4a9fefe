// Where a URL a tenant chose may lead: public addresses only. A SQL sink's query (roller/feeds/) and a
// warehouse's store endpoint or REST catalog (egress-connect.ts: the Node edge and the roller) must not
// read the operator's network (the cloud metadata endpoint, the metrics port, internal services), so
// every address they would connect to — a literal one, each DNS answer, each redirect's target — is
// checked here, and refused unless it is public or the operator opened it (an allow list per purpose).
import { BlockList, isIP } from 'node:net'

/** Address ranges a run never reaches unless allowed, each with the name an error gives it. */
const REFUSED: Array<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'CGNAT (shared)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved (IETF protocol assignments)'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'reserved (benchmarking)'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved (and broadcast)'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['fc00::', 7, 'ipv6', 'private (unique local)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
]

/** One BlockList per kind of range, so a refusal can say which kind the address is. */
const RANGES = REFUSED.map(([net, prefix, type, kind]) => {
  const list = new BlockList()
  list.addSubnet(net, prefix, type)
  return { list, type, kind }
})

/**
 * The IPv4 address an IPv6 one carries and reaches: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible
 * (::a.b.c.d, deprecated) and NAT64 (64:ff9b::a.b.c.d). Checked as IPv4, so ::ffff:127.0.0.1 is loopback.
 */
export function embeddedIPv4(address: string): string | null {
  if (isIP(address) !== 6) return null
  const words = expandIPv6(address)
  const zero = (from: number, to: number) => words.slice(from, to).every((w) => w === 0)
  const mapped = zero(0, 5) && words[5] === 0xffff
  const compatible = zero(0, 6) && (words[6] !== 0 || words[7] > 1) // not :: or ::1
  const nat64 = words[0] === 0x64 && words[1] === 0xff9b && zero(2, 6)
  if (!mapped && !compatible && !nat64) return null
  return [words[6] >> 8, words[6] & 0xff, words[7] >> 8, words[7] & 0xff].join('.')
}

/** The eight 16-bit words of an IPv6 address (a trailing dotted quad included). */
function expandIPv6(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, '')
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number)
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split('::')
  const part = (s: string | undefined) => (s ? s.split(':').map((w) => Number.parseInt(w, 16)) : [])
  const left = part(head)
  const right = part(tail)
  const fill = tail === undefined ? [] : new Array(8 - left.length - right.length).fill(0)
  return [...left, ...fill, ...right]
}

/** What an address is, when it is not public: "loopback", "private", … */
export function nonPublicKind(given: string): string | null {
  const address = given.replace(/%.*$/, '') // a zone (fe80::1%eth0) names the interface, not the range
  if (!isIP(address)) return 'malformed'
  const v4 = embeddedIPv4(address)
  const [checked, type] = v4 ? [v4, 'ipv4' as const] : [address, isIP(address) === 4 ? ('ipv4' as const) : ('ipv6' as const)]
  for (const r of RANGES) if (r.type === type && r.list.check(checked, type)) return r.kind
  return null
}

/** Whose URLs a policy checks, and the setting that opens internal hosts to them (refusals name both). */
export interface EgressPurpose {
  who: string
  setting: string
  opens: string
}

const SQL_SINKS: EgressPurpose = { who: 'a SQL sink', setting: 'LHBOX_SQL_ALLOW_HOSTS', opens: 'named internal sources' }
export const WAREHOUSES: EgressPurpose = {
  who: 'a warehouse’s endpoint or catalog',
  setting: 'LHBOX_WAREHOUSE_ALLOW_HOSTS',
  opens: 'named internal stores and catalogs',
}

/** RFC 6761: these names are loopback wherever they are resolved. */
const LOOPBACK_NAME = /(^|\.)localhost\.?$/i

/** The setting's exact host names, addresses and CIDRs an operator opened (comma-separated). */
export class EgressPolicy {
  readonly hosts: ReadonlySet<string>
  private readonly cidrs = new BlockList()
  readonly entries: readonly string[]
  readonly purpose: EgressPurpose

  constructor(allow: readonly string[] = [], purpose: EgressPurpose = SQL_SINKS) {
    this.purpose = purpose
    const setting = purpose.setting
    const hosts = new Set<string>()
    for (const entry of allow) {
      const cidr = /^(.+)\/(\d{1,3})$/.exec(entry)
      const net = (cidr ? cidr[1] : entry).replace(/^\[(.*)\]$/, '$1')
      const family = isIP(net)
      if (family) {
        const prefix = cidr ? Number(cidr[2]) : family === 4 ? 32 : 128
        if (prefix > (family === 4 ? 32 : 128)) throw new Error(`${setting}: ${entry} is not a CIDR`)
        const v4 = embeddedIPv4(net)
        // An allowed IPv4 address is allowed in its IPv6-mapped form too (the check unwraps those).
        if (v4 && prefix >= 96) this.cidrs.addSubnet(v4, prefix - 96, 'ipv4')
        else this.cidrs.addSubnet(net, prefix, family === 4 ? 'ipv4' : 'ipv6')
      } else if (cidr || !/^[a-z0-9._-]+$/i.test(entry)) {
        throw new Error(`${setting}: ${entry} is neither a host name, an address nor a CIDR`)
      } else hosts.add(normalHost(entry))
    }
    this.hosts = hosts
    this.entries = [...allow]
  }

  /**
   * The setting's list; `operator`: URLs the operator configured (its own store, its edge), whose hosts
   * are opened too, since they are internal in most deployments.
   */
  static fromEnv(value: string | undefined, purpose: EgressPurpose = SQL_SINKS, operator: ReadonlyArray<string | undefined> = []): EgressPolicy {
    const listed = (value ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
    const own = operator.filter((u): u is string => !!u).map((u) => new URL(u).hostname.replace(/^\[(.*)\]$/, '$1'))
    return new EgressPolicy([...listed, ...own], purpose)
  }

  /**
   * Why a connection to `address` (reached by the name `host`) is refused, or null when it may be made:
   * public, or opened by name or by range.
   */
  refusal(host: string, address: string): string | null {
    const kind = nonPublicKind(address)
    if (kind === null || this.hosts.has(normalHost(host)) || this.allowsAddress(address)) return null
    const via = normalHost(host) === address.toLowerCase() ? '' : ` (${host} resolves to it)`
    const { who, setting, opens } = this.purpose
    return `${address} is ${/^[aeiou]/i.test(kind) ? 'an' : 'a'} ${kind} address${via}; ${who} reaches public addresses only (${setting} opens ${opens})`
  }

  /**
   * What can be refused of a host before any DNS answer (a Worker has none): a literal address, or a
   * localhost name (127.0.0.1 and ::1, both checked); null for any other name, checked when connecting.
   */
  hostRefusal(given: string): string | null {
    const host = normalHost(given)
    if (isIP(host.replace(/%.*$/, ''))) return this.refusal(host, host)
    if (!LOOPBACK_NAME.test(host) || this.hosts.has(host)) return null
    return this.refusal(host, '127.0.0.1') ?? this.refusal(host, '::1')
  }

  private allowsAddress(address: string): boolean {
    const v4 = embeddedIPv4(address)
    if (v4) return this.cidrs.check(v4, 'ipv4')
    return this.cidrs.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6')
  }
}

/** Host names compare without case, a trailing dot or IPv6 brackets. */
const normalHost = (host: string) =>
  host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
