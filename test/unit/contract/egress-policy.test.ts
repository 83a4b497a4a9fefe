// The egress policy: every refused range (IPv4, IPv6, IPv6 forms carrying IPv4), public addresses let
// through, what LHBOX_SQL_ALLOW_HOSTS opens (by name, by address, by CIDR), and the warehouses' policy.
import { describe, expect, it } from 'vitest'
import { EgressPolicy, embeddedIPv4, nonPublicKind, WAREHOUSES } from '../../../contract/egress-policy.ts'

const refused: Array<[string, string]> = [
  ['0.0.0.0', 'unspecified'],
  ['0.255.255.255', 'unspecified'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.254', 'private'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'CGNAT (shared)'],
  ['100.127.255.255', 'CGNAT (shared)'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['169.254.169.254', 'link-local (cloud metadata)'],
  ['169.254.0.1', 'link-local (cloud metadata)'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved (and broadcast)'],
  ['255.255.255.255', 'reserved (and broadcast)'],
  ['192.0.0.170', 'reserved (IETF protocol assignments)'],
  ['198.18.0.1', 'reserved (benchmarking)'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['fc00::1', 'private (unique local)'],
  ['fd12:3456:789a::1', 'private (unique local)'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf:ffff::1', 'link-local'],
  ['fec0::1', 'site-local'],
  ['ff02::1', 'multicast'],
  ['fd00:ec2::254', 'private (unique local)'], // AWS's IPv6 metadata endpoint
  // IPv6 forms that carry an IPv4 address are checked as that address.
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['0:0:0:0:0:ffff:a9fe:a9fe', 'link-local (cloud metadata)'],
  ['::ffff:10.1.2.3', 'private'],
  ['::ffff:0.0.0.0', 'unspecified'],
  ['::127.0.0.1', 'loopback'],
  ['64:ff9b::169.254.169.254', 'link-local (cloud metadata)'],
  ['64:ff9b::c0a8:101', 'private'],
]

const publicOnes = [
  '1.1.1.1',
  '8.8.8.8',
  '93.184.215.14',
  '100.63.255.255',
  '100.128.0.1',
  '172.15.255.255',
  '172.32.0.1',
  '169.253.1.1',
  '2606:4700::1111',
  '2001:db9::1',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
]

describe('egress policy: the ranges', () => {
  it.each(refused)('%s is %s', (address, kind) => {
    expect(nonPublicKind(address)).toBe(kind)
    expect(new EgressPolicy().refusal(address, address)).toBe(
      `${address} is ${kind === 'unspecified' ? 'an' : 'a'} ${kind} address; a SQL sink reaches public addresses only (LHBOX_SQL_ALLOW_HOSTS opens named internal sources)`,
    )
  })

  it.each(publicOnes)('%s is public', (address) => {
    expect(nonPublicKind(address)).toBeNull()
    expect(new EgressPolicy().refusal(address, address)).toBeNull()
  })

  it('reads the IPv4 address inside mapped, compatible and NAT64 IPv6 forms, and nothing else', () => {
    expect(embeddedIPv4('::ffff:127.0.0.1')).toBe('127.0.0.1')
    expect(embeddedIPv4('::ffff:a9fe:a9fe')).toBe('169.254.169.254')
    expect(embeddedIPv4('64:ff9b::7f00:1')).toBe('127.0.0.1')
    expect(embeddedIPv4('::1')).toBeNull()
    expect(embeddedIPv4('::')).toBeNull()
    expect(embeddedIPv4('2001:db8::ffff:7f00:1')).toBeNull()
    expect(embeddedIPv4('127.0.0.1')).toBeNull()
  })

  it('names the host a refused address was reached by', () => {
    expect(new EgressPolicy().refusal('localhost', '127.0.0.1')).toMatch(/^127\.0\.0\.1 is a loopback address \(localhost resolves to it\); /)
    expect(nonPublicKind('not-an-address')).toBe('malformed')
  })
})

describe('egress policy: LHBOX_SQL_ALLOW_HOSTS', () => {
  const policy = EgressPolicy.fromEnv(' minio.internal , 10.0.0.0/8,127.0.0.2, fd00::/8, [::1], Catalog.Local. ')

  it('opens an exact host name to whatever it resolves to (any case, trailing dot), and no other name', () => {
    expect(policy.refusal('minio.internal', '192.168.7.7')).toBeNull()
    expect(policy.refusal('MINIO.internal.', '192.168.7.7')).toBeNull()
    expect(policy.refusal('catalog.local', '169.254.1.1')).toBeNull()
    expect(policy.refusal('x.minio.internal', '192.168.7.7')).toMatch(/private/)
    expect(policy.refusal('minio.internal.evil.example', '192.168.7.7')).toMatch(/private/)
  })

  it('opens an address or a CIDR whatever name reached it, its IPv6-mapped form too', () => {
    expect(policy.refusal('db.anything', '10.20.30.40')).toBeNull()
    expect(policy.refusal('::ffff:10.20.30.40', '::ffff:10.20.30.40')).toBeNull()
    expect(policy.refusal('127.0.0.2', '127.0.0.2')).toBeNull()
    expect(policy.refusal('127.0.0.1', '127.0.0.1')).toMatch(/^127\.0\.0\.1 is a loopback address/)
    expect(policy.refusal('::ffff:127.0.0.2', '::ffff:127.0.0.2')).toBeNull()
    expect(policy.refusal('fd12::1', 'fd12::1')).toBeNull()
    expect(policy.refusal('fc00::1', 'fc00::1')).toMatch(/private/)
    expect(policy.refusal('::1', '::1')).toBeNull()
    expect(policy.refusal('169.254.169.254', '169.254.169.254')).toMatch(/cloud metadata/)
  })

  it('a mapped IPv4 entry opens the IPv4 address', () => {
    const mapped = new EgressPolicy(['::ffff:127.0.0.1'])
    expect(mapped.refusal('127.0.0.1', '127.0.0.1')).toBeNull()
    expect(mapped.refusal('127.0.0.2', '127.0.0.2')).toMatch(/loopback/)
  })

  it('nothing opened by default; an entry that is no host, address or CIDR stops the roller at start', () => {
    expect(EgressPolicy.fromEnv(undefined).entries).toEqual([])
    expect(EgressPolicy.fromEnv('').refusal('localhost', '::1')).toMatch(/loopback/)
    for (const bad of ['10.0.0.0/33', 'http://x', 'a b', '::1/129', 'host/8']) expect(() => EgressPolicy.fromEnv(bad), bad).toThrow(/LHBOX_SQL_ALLOW_HOSTS/)
  })
})

describe('egress policy: warehouses (LHBOX_WAREHOUSE_ALLOW_HOSTS)', () => {
  const policy = EgressPolicy.fromEnv('catalog.internal,10.1.0.0/16', WAREHOUSES, ['http://s3.internal:7070', undefined, 'http://[fd00::7]:9464/sql/check'])

  it('names its own setting in refusals and errors', () => {
    expect(policy.refusal('store.example', '192.168.0.9')).toMatch(
      /^192\.168\.0\.9 is a private address \(store\.example resolves to it\); a warehouse’s endpoint or catalog reaches public addresses only \(LHBOX_WAREHOUSE_ALLOW_HOSTS opens/,
    )
    expect(() => EgressPolicy.fromEnv('http://x', WAREHOUSES)).toThrow(/^LHBOX_WAREHOUSE_ALLOW_HOSTS: http:\/\/x is neither/)
  })

  it('opens the hosts of the operator’s own URLs (a name, a bracketed IPv6 address) beside the listed ones', () => {
    expect(policy.refusal('s3.internal', '172.18.0.3')).toBeNull()
    expect(policy.refusal('fd00::7', 'fd00::7')).toBeNull()
    expect(policy.refusal('catalog.internal', '10.9.9.9')).toBeNull()
    expect(policy.refusal('x', '10.1.2.3')).toBeNull()
    expect(policy.refusal('other.internal', '172.18.0.4')).toMatch(/private/)
  })

  it('refuses before DNS what it can: literal addresses and localhost names; other names wait for the connection', () => {
    expect(policy.hostRefusal('127.0.0.2')).toMatch(/^127\.0\.0\.2 is a loopback address;/)
    expect(policy.hostRefusal('[::1]')).toMatch(/^::1 is a loopback address;/)
    expect(policy.hostRefusal('[::ffff:169.254.169.254]')).toMatch(/cloud metadata/)
    expect(policy.hostRefusal('169.254.169.254')).toMatch(/cloud metadata/)
    expect(policy.hostRefusal('LOCALHOST.')).toMatch(/^127\.0\.0\.1 is a loopback address \(localhost resolves to it\)/)
    expect(policy.hostRefusal('minio.localhost')).toMatch(/loopback/)
    expect(policy.hostRefusal('10.1.0.5')).toBeNull()
    expect(policy.hostRefusal('s3.internal')).toBeNull()
    expect(policy.hostRefusal('anything.example')).toBeNull()
    expect(policy.hostRefusal('93.184.216.34')).toBeNull()
    expect(new EgressPolicy(['localhost'], WAREHOUSES).hostRefusal('localhost')).toBeNull()
    expect(new EgressPolicy(['127.0.0.0/8', '::1'], WAREHOUSES).hostRefusal('localhost')).toBeNull()
  })
})
