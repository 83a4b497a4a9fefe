import { Readable } from 'node:stream'
import avsc from 'avsc'
import { describe, expect, it } from 'vitest'
import { readAvroFile } from '../../../iceberg/avro/read-container.ts'
import { writeAvroFile } from '../../../iceberg/avro/write-container.ts'

const schemaJson = JSON.stringify({
  type: 'record',
  name: 'manifest_file',
  fields: [
    { name: 'id', type: 'long', 'field-id': 500 },
    { name: 'n', type: 'int', 'field-id': 501 },
    { name: 'ok', type: 'boolean', 'field-id': 502 },
    { name: 'f', type: 'float', 'field-id': 503 },
    { name: 'd', type: 'double', 'field-id': 504 },
    { name: 's', type: 'string', 'field-id': 505 },
    { name: 'b', type: ['null', 'bytes'], default: null, 'field-id': 506 },
    { name: 'fx', type: { type: 'fixed', name: 'fixed_4', size: 4 }, 'field-id': 507 },
    { name: 'fx2', type: ['null', 'fixed_4'], default: null, 'field-id': 508 },
    { name: 'e', type: { type: 'enum', name: 'color', symbols: ['red', 'green'] }, 'field-id': 509 },
    { name: 'list', type: { type: 'array', items: 'long', 'element-id': 510 }, 'field-id': 511 },
    { name: 'm', type: { type: 'map', values: 'int' }, 'field-id': 512 },
    {
      name: 'kv',
      type: [
        'null',
        {
          type: 'array',
          logicalType: 'map',
          items: {
            type: 'record',
            name: 'k1_v2',
            fields: [
              { name: 'key', type: 'int', 'field-id': 1 },
              { name: 'value', type: 'long', 'field-id': 2 },
            ],
          },
        },
      ],
      default: null,
      'field-id': 513,
    },
  ],
})

const record = (i: number) => ({
  id: i % 2 ? 9223372036854775807n : -9223372036854775808n,
  n: -(2 ** 31) + i,
  ok: i % 2 === 0,
  f: 1.5,
  d: -0.1 * i,
  s: `héllo ${i} 😀`,
  b: i % 3 ? Uint8Array.of(i & 255, 0, 255) : null,
  fx: Uint8Array.of(1, 2, 3, i & 255),
  fx2: i % 2 ? null : Uint8Array.of(9, 9, 9, 9),
  e: i % 2 ? 'green' : 'red',
  list: [0n, 1n, -1n, 2n ** 53n + 1n, BigInt(i)],
  m: new Map([
    ['a', i],
    ['b', i - 100],
  ]),
  kv: i % 4 ? [{ key: 117, value: 9007199254740993n }] : null,
})

describe('Avro container files', () => {
  it('round-trips every type, 63-bit longs exactly, with deflate and null codecs', async () => {
    const records = Array.from({ length: 50 }, (_, i) => record(i))
    for (const codec of ['deflate', 'null'] as const) {
      const bytes = await writeAvroFile(records, { schemaJson, codec, metadata: { 'format-version': '2' } })
      const file = await readAvroFile(bytes)
      expect(file.records).toEqual(records)
      expect(file.metadata['avro.codec']).toBe(codec)
      expect(file.metadata['format-version']).toBe('2')
    }
  })

  it('stores the schema JSON verbatim, field-id attributes included', async () => {
    const bytes = await writeAvroFile([record(1)], { schemaJson })
    const file = await readAvroFile(bytes)
    expect(file.schemaJson).toBe(schemaJson)
    expect(file.schemaJson).toContain('"field-id":500')
    expect(new TextDecoder().decode(bytes)).toContain('"field-id":513')
  })

  it('splits large inputs into several blocks', async () => {
    const big = { ...record(2), s: 'x'.repeat(300_000) }
    const records = Array.from({ length: 8 }, () => big)
    const bytes = await writeAvroFile(records, { schemaJson, codec: 'null', syncMarker: new Uint8Array(16).fill(7) })
    const syncs = countSubarray(bytes, new Uint8Array(16).fill(7))
    expect(syncs).toBeGreaterThan(2) // header + at least two blocks
    expect((await readAvroFile(bytes)).records).toHaveLength(8)
  })

  it('is readable by avsc (an independent Avro implementation), and reads what avsc writes', async () => {
    const plain = JSON.stringify({
      type: 'record',
      name: 'r',
      fields: [
        { name: 'a', type: 'long' },
        { name: 's', type: ['null', 'string'] },
        { name: 'm', type: { type: 'map', values: 'double' } },
      ],
    })
    const ours = [
      { a: 42n, s: 'x', m: new Map([['k', 1.25]]) },
      { a: -7n, s: null, m: new Map() },
    ]
    for (const codec of ['deflate', 'null'] as const) {
      const bytes = await writeAvroFile(ours, { schemaJson: plain, codec })
      const decoded: unknown[] = []
      await new Promise<void>((resolve, reject) => {
        Readable.from([Buffer.from(bytes)])
          .pipe(new avsc.streams.BlockDecoder())
          .on('data', (r: unknown) => decoded.push({ ...(r as object) }))
          .on('end', resolve)
          .on('error', reject)
      })
      expect(decoded).toEqual([
        { a: 42, s: 'x', m: { k: 1.25 } },
        { a: -7, s: null, m: {} },
      ])
    }
    const type = avsc.Type.forSchema(JSON.parse(plain))
    const chunks: Buffer[] = []
    await new Promise<void>((resolve, reject) => {
      const enc = new avsc.streams.BlockEncoder(type, { codec: 'deflate' })
      enc
        .on('data', (c: Buffer) => chunks.push(c))
        .on('end', resolve)
        .on('error', reject)
      enc.write({ a: 5, s: 'y', m: { z: 2 } })
      enc.end()
    })
    const file = await readAvroFile(new Uint8Array(Buffer.concat(chunks)))
    expect(file.records).toEqual([{ a: 5n, s: 'y', m: new Map([['z', 2]]) }])
  })

  it('rejects values that do not fit the schema and unsupported codecs', async () => {
    await expect(writeAvroFile([{ ...record(1), n: 2 ** 31 }], { schemaJson })).rejects.toThrow(/n: expected int/)
    await expect(writeAvroFile([{ ...record(1), id: 2n ** 63n }], { schemaJson })).rejects.toThrow(/out of range/)
    const bytes = await writeAvroFile([], { schemaJson, codec: 'null' })
    const at = indexOf(bytes, new TextEncoder().encode('avro.codec')) + 11 // key, then the value's length byte
    const hacked = bytes.slice()
    hacked.set(new TextEncoder().encode('zzzz'), at)
    await expect(readAvroFile(hacked)).rejects.toThrow(/unsupported Avro codec/)
  })
})

function countSubarray(hay: Uint8Array, needle: Uint8Array): number {
  let n = 0
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer
    n++
  }
  return n
}

/** Index of the first occurrence of `needle` in `hay`. */
function indexOf(hay: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer
    return i
  }
  return -1
}
