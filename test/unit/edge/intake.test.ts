import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { ApiError } from '../../../edge/errors.ts'
import { MAX_BODY_BYTES, readBody } from '../../../edge/body.ts'
import { splitBatch } from '../../../edge/intake.ts'

const enc = (s: string) => new TextEncoder().encode(s)
const dec = (b: Uint8Array) => new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(b)
const split = (s: string | Uint8Array) => {
  const r = splitBatch(typeof s === 'string' ? enc(s) : s)
  return { ...r, ndjson: dec(r.ndjson) }
}

/** The ApiError a call throws, reduced to what the answer carries. */
function refusal(fn: () => unknown) {
  try {
    fn()
  } catch (e) {
    if (!(e instanceof ApiError)) throw e
    return { status: e.status, code: e.code, ...e.details }
  }
  throw new Error('expected a refusal')
}
async function refusalAsync(p: Promise<unknown>) {
  try {
    await p
  } catch (e) {
    if (!(e instanceof ApiError)) throw e
    return { status: e.status, code: e.code, ...e.details }
  }
  throw new Error('expected a refusal')
}
const bad = (s: string | Uint8Array) => refusal(() => splitBatch(typeof s === 'string' ? enc(s) : s))

/** A body stream handing out `chunks` one per pull, recording pulls and cancellation. */
function body(chunks: Uint8Array[]) {
  const seen = { pulls: 0, cancelled: false }
  let k = 0
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        seen.pulls++
        if (k < chunks.length) controller.enqueue(chunks[k++])
        else controller.close()
      },
      cancel() {
        seen.cancelled = true
      },
    },
    { highWaterMark: 0 }, // pull only when read, so the pull count is exact
  )
  return { stream, seen }
}
const pieces = (b: Uint8Array, size: number) => {
  const out: Uint8Array[] = []
  for (let i = 0; i < b.length; i += size) out.push(b.subarray(i, i + size))
  return out
}

describe('splitBatch', () => {
  it('stores each object element with its original bytes, one per line', () => {
    const body = '[{"id":9223372036854775807,"x":0.1000000000000000055511151231257827,"s":"\\u00e9\\uD83D\\uDE00","r":"é😀中","n":-0,"e":1E+400,"f":-12.5e-3}]'
    const r = split(body)
    const line = body.slice(1, -1) + '\n'
    expect(r).toEqual({ ndjson: line, accepted: 1, acceptedBytes: enc(line).length, rejected: 0, reasons: [] })
    // Byte for byte, multi-byte UTF-8 included.
    expect(Array.from(splitBatch(enc(body)).ndjson)).toEqual(Array.from(enc(body.slice(1, -1) + '\n')))
  })

  it('folds whitespace newlines of pretty-printed arrays (LF, CRLF, tabs) and trims around elements', () => {
    const lf = '[\n  {\n    "a": 1,\n    "b": [\n      2,\n      {"c": null}\n    ]\n  },\n  {"d": "x"}\n]\n'
    const lfLines = '{     "a": 1,     "b": [       2,       {"c": null}     ]   }\n{"d": "x"}\n'
    expect(split(lf)).toEqual({
      ndjson: lfLines,
      accepted: 2,
      acceptedBytes: lfLines.length,
      rejected: 0,
      reasons: [],
    })
    const crlf = '\r\n[\r\n\t{\r\n\t\t"a": true,\r\n\t\t"b": "x"\r\n\t} ,\r\n\t{ }\r\n]\r\n'
    expect(split(crlf).ndjson).toBe('{  \t\t"a": true,  \t\t"b": "x"  \t}\n{ }\n')
  })

  it('keeps escaped newlines, quotes and brackets inside strings untouched', () => {
    const r = split('[{"s":"]},[{\\"\\\\","t":"a,b\\nc","u":"\\/\\b\\f\\r\\t"}, "],{", {"k": {"[": [[], {}]}}]')
    const objects = ['{"s":"]},[{\\"\\\\","t":"a,b\\nc","u":"\\/\\b\\f\\r\\t"}\n', '{"k": {"[": [[], {}]}}\n']
    expect(r).toEqual({
      ndjson: `${objects[0]}"],{"\n${objects[1]}`,
      accepted: 2,
      acceptedBytes: objects.join('').length,
      rejected: 1,
      reasons: [{ index: 1, reason: 'not_an_object' }],
    })
  })

  it('stores every element, objects or not, in order: line i is element i; lists the non-objects by index', () => {
    const r = split('[1, "s", [], null, true, {"a":1}, false, -2.5e3, {}, [{"b":2}], 0]')
    expect(r).toEqual({
      ndjson: '1\n"s"\n[]\nnull\ntrue\n{"a":1}\nfalse\n-2.5e3\n{}\n[{"b":2}]\n0\n',
      accepted: 2,
      acceptedBytes: 11, // '{"a":1}\n{}\n': the accepted rows' bytes
      rejected: 9,
      reasons: [0, 1, 2, 3, 4, 6, 7, 9, 10].map((index) => ({ index, reason: 'not_an_object' })),
    })
  })

  it('keeps a non-object element’s bytes as sent, multi-line ones folded onto their line', () => {
    const elements = ['[1,\n   2.50]', '"a\\u0000é"', '12345678901234567890.5e-3', 'false', '{"x":\r\n1}', '[{"k":"v","k":"w"}]']
    const r = splitBatch(enc(`[\n  ${elements.join(' ,\n  ')}\n]`))
    const lines = dec(r.ndjson).split('\n')
    expect(lines.pop()).toBe('')
    expect(lines).toEqual(elements.map((e) => e.replace(/[\r\n]/g, ' ')))
    expect(r.reasons.map((x) => x.index)).toEqual([0, 1, 2, 3, 5])
    expect(r.acceptedBytes).toBe(enc('{"x":  1}\n').length)
  })

  it('accepts an empty array and a leading UTF-8 BOM', () => {
    const none = { ndjson: '', accepted: 0, acceptedBytes: 0, rejected: 0, reasons: [] }
    expect(split(' [ ] ')).toEqual(none)
    expect(split('[]')).toEqual(none)
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...enc('[{"a":1}]')])
    expect(split(bom)).toEqual({ ndjson: '{"a":1}\n', accepted: 1, acceptedBytes: 8, rejected: 0, reasons: [] })
  })

  it('refuses a body that is not an array', () => {
    const notArray = { status: 400, code: 'not_an_array' }
    for (const s of ['{"a":1}', '42', '-1', '"x"', 'null', 'true', '', '  \n ']) expect(bad(s)).toEqual(notArray)
    expect(bad(new Uint8Array())).toEqual(notArray)
    // Not JSON at all: malformed, at the first byte.
    expect(bad('<html>')).toEqual({ status: 400, code: 'malformed_json', offset: 0 })
  })

  it.each([
    ['trailing comma', '[{"a":1},]', 9],
    ['trailing comma in an object', '[{"a":1,}]', 8],
    ['missing comma', '[{"a":1} {"b":2}]', 9],
    ['missing colon', '[{"a" 1}]', 6],
    ['unquoted key', '[{a:1}]', 2],
    ['bad escape', '[{"a":"\\x"}]', 8],
    ['bad \\u escape', '["\\u12G4"]', 6],
    ['unterminated string', '[{"a":"abc', 10],
    ['leading zero', '[01]', 2],
    ['negative leading zero', '[-01]', 3],
    ['dot without digits', '[1.]', 3],
    ['dot without leading digits', '[.5]', 1],
    ['lone minus', '[-]', 2],
    ['exponent without digits', '[1e+]', 4],
    ['plus sign', '[+1]', 1],
    ['control character in a string', '[{"a":"x\ty"}]', 8],
    ['raw newline in a string', '["a\nb"]', 3],
    ['garbage after the array', '[{"a":1}] x', 10],
    ['a second array', '[][]', 2],
    ['mismatched bracket', '[{"a":1]', 7],
    ['unclosed array', '[{"a":1}', 8],
    ['unclosed array after a comma', '[1,', 3],
    ['misspelled literal', '[tru]', 4],
    ['truncated literal', '[nul', 4],
    ['single quotes', "[{'a':1}]", 2],
    ['NaN', '[NaN]', 1],
    ['trailing backslash', '["\\', 3],
  ])('%s → malformed_json at the first bad byte', (_, s, offset) => {
    expect(bad(s)).toEqual({ status: 400, code: 'malformed_json', offset })
  })

  it('says where the error is in the message', () => {
    const e = (() => {
      try {
        splitBatch(enc('[{"a":1},]'))
      } catch (err) {
        return err as ApiError
      }
    })()!
    expect(e.message).toBe('malformed JSON: unexpected byte 0x5d at byte 9')
  })

  it('refuses invalid UTF-8 in strings', () => {
    const withBytes = (...b: number[]) => new Uint8Array([...enc('["'), ...b, ...enc('"]')])
    const at = (offset: number) => ({ status: 400, code: 'malformed_json', offset })
    expect(bad(withBytes(0xff))).toEqual(at(2))
    expect(bad(withBytes(0xc0, 0x80))).toEqual(at(2)) // overlong
    expect(bad(withBytes(0xe0, 0x80, 0x80))).toEqual(at(3)) // overlong
    expect(bad(withBytes(0xed, 0xa0, 0x80))).toEqual(at(3)) // a UTF-16 surrogate
    expect(bad(withBytes(0xf4, 0x90, 0x80, 0x80))).toEqual(at(3)) // beyond U+10FFFF
    expect(bad(withBytes(0xe2, 0x82))).toEqual(at(4)) // truncated: the closing quote is no continuation
    expect(bad(withBytes(0x80))).toEqual(at(2)) // a lone continuation byte
    // Outside strings any non-ASCII byte is an error.
    expect(bad(new Uint8Array([0x5b, 0xc3, 0xa9, 0x5d]))).toEqual(at(1))
  })

  it('limits nesting to 512 levels, counting the outer array', () => {
    expect(split('['.repeat(512) + ']'.repeat(512))).toEqual({
      ndjson: '['.repeat(511) + ']'.repeat(511) + '\n',
      accepted: 0,
      acceptedBytes: 0,
      rejected: 1,
      reasons: [{ index: 0, reason: 'not_an_object' }],
    })
    expect(bad('['.repeat(513) + ']'.repeat(513))).toEqual({ status: 400, code: 'malformed_json', offset: 512 })
    const deepObject = '[' + '{"a":'.repeat(511) + '1' + '}'.repeat(511) + ']'
    expect(split(deepObject).accepted).toBe(1)
    expect(bad('[' + '{"a":'.repeat(512) + '1' + '}'.repeat(512) + ']')).toEqual({
      status: 400,
      code: 'malformed_json',
      offset: 1 + 5 * 511,
    })
  })

  it('does not modify its input', () => {
    const input = enc('[\n{"a":\n1}\n]')
    splitBatch(input)
    expect(dec(input)).toBe('[\n{"a":\n1}\n]')
  })
})

describe('readBody', () => {
  const json = enc('[{"a":1},{"b":"é"}]')

  it('reads a plain body across chunks', async () => {
    const { stream } = body(pieces(json, 4))
    expect(dec(await readBody(stream, {}))).toBe('[{"a":1},{"b":"é"}]')
    const one = body([json])
    expect(await readBody(one.stream, { contentEncoding: 'identity' })).toBe(json)
  })

  it('defaults to the 16 MiB limit', () => {
    expect(MAX_BODY_BYTES).toBe(16 * 1024 * 1024)
  })

  it('accepts a body of exactly the limit', async () => {
    const { stream } = body(pieces(json, 4))
    expect((await readBody(stream, { limit: json.length })).length).toBe(json.length)
  })

  // A cancelled request body costs workerd its connection (issue 15, defect 1): the rest is drained.
  it('refuses a plain body past the limit and drains the rest, up to the drain limit', async () => {
    const hundred = () => body(Array.from({ length: 100 }, () => new Uint8Array(4)))
    const drained = hundred()
    expect(await refusalAsync(readBody(drained.stream, { limit: 10 }))).toEqual({ status: 413, code: 'payload_too_large', limit: 10 })
    // 4 + 4 + 4 > 10: the third chunk tripped the limit; the other 97 and the end were read and dropped.
    expect(drained.seen).toEqual({ pulls: 101, cancelled: false })
    // Past the drain limit (8 bytes more: two chunks, then a third crosses it) the upload is cancelled.
    const cut = hundred()
    expect(await refusalAsync(readBody(cut.stream, { limit: 10, drainLimit: 8 }))).toEqual({ status: 413, code: 'payload_too_large', limit: 10 })
    expect(cut.seen).toEqual({ pulls: 6, cancelled: true })
  })

  it('refuses an empty body', async () => {
    const empty = { status: 400, code: 'malformed_json', offset: 0 }
    expect(await refusalAsync(readBody(null, {}))).toEqual(empty)
    expect(await refusalAsync(readBody(body([]).stream, {}))).toEqual(empty)
    expect(await refusalAsync(readBody(body([gzipSync(new Uint8Array())]).stream, { contentEncoding: 'gzip' }))).toEqual(empty)
  })

  it('decompresses gzip', async () => {
    const { stream } = body(pieces(gzipSync(json), 7))
    expect(dec(await readBody(stream, { contentEncoding: 'gzip' }))).toBe('[{"a":1},{"b":"é"}]')
    const again = body([gzipSync(json)])
    expect(dec(await readBody(again.stream, { contentEncoding: 'GZIP, identity' }))).toBe('[{"a":1},{"b":"é"}]')
    const alias = body([gzipSync(json)])
    expect(dec(await readBody(alias.stream, { contentEncoding: 'x-gzip' }))).toBe('[{"a":1},{"b":"é"}]')
  })

  it('applies the limit to the decompressed bytes and drains the upload', async () => {
    // A bomb: 1 MiB of zeros gzips to about 1 KiB; the upload repeats it as 1000 gzip members (RFC 1952
    // allows several), so it would inflate to 1000 MiB if read to the end.
    const member = gzipSync(new Uint8Array(1024 * 1024))
    expect(member.length).toBeLessThan(1100)
    const { stream, seen } = body(Array.from({ length: 1000 }, () => member))
    expect(await refusalAsync(readBody(stream, { contentEncoding: 'gzip', limit: 64 * 1024 }))).toEqual({
      status: 413,
      code: 'payload_too_large',
      limit: 64 * 1024,
    })
    // The upload is read to its end, not inflated: all 1000 members and the end.
    expect(seen).toEqual({ pulls: 1001, cancelled: false })
    // With a drain limit under its size it is cancelled: the decompressor reads a little ahead (Node
    // buffers about 64 KiB of input), then 100 more members are dropped.
    const cut = body(Array.from({ length: 1000 }, () => member))
    await refusalAsync(readBody(cut.stream, { contentEncoding: 'gzip', limit: 64 * 1024, drainLimit: 100 * member.length }))
    expect(cut.seen.cancelled).toBe(true)
    expect(cut.seen.pulls).toBeLessThan(200)
    // Under a limit it fits in, the same member is accepted whole.
    expect((await readBody(body(pieces(member, 16)).stream, { contentEncoding: 'gzip', limit: 1024 * 1024 })).length).toBe(1024 * 1024)
  })

  it('caps the compressed bytes too (empty deflate blocks inflate to nothing)', async () => {
    const header = [0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff]
    const emptyStoredBlock = [0x00, 0x00, 0x00, 0xff, 0xff]
    const chunks = [new Uint8Array(header), ...Array.from({ length: 1000 }, () => new Uint8Array(emptyStoredBlock))]
    const { stream, seen } = body(chunks)
    // limit 100: compressed cap = 100 + 1 + 1024 = 1125 bytes = header + 223 blocks (1125 bytes) + 1.
    expect(await refusalAsync(readBody(stream, { contentEncoding: 'gzip', limit: 100 }))).toEqual({
      status: 413,
      code: 'payload_too_large',
      limit: 100,
    })
    // The rest is drained: 1001 chunks and the end.
    expect(seen).toEqual({ pulls: 1 + 1000 + 1, cancelled: false })
  })

  it('refuses a corrupt or truncated gzip stream', async () => {
    const malformed = { status: 400, code: 'malformed_gzip' }
    expect(await refusalAsync(readBody(body([json]).stream, { contentEncoding: 'gzip' }))).toEqual(malformed)
    const gz = gzipSync(json)
    expect(await refusalAsync(readBody(body([gz.subarray(0, gz.length - 6)]).stream, { contentEncoding: 'gzip' }))).toEqual(malformed)
    const flipped = gz.slice()
    flipped[gz.length - 8] ^= 0xff // the CRC32
    expect(await refusalAsync(readBody(body([flipped]).stream, { contentEncoding: 'gzip' }))).toEqual(malformed)
  })

  it('passes a failing upload through as it is, not as a corrupt gzip', async () => {
    const dropped = new Error('connection reset')
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(gzipSync(json).subarray(0, 10))
        controller.error(dropped)
      },
    })
    await expect(readBody(stream, { contentEncoding: 'gzip' })).rejects.toBe(dropped)
  })

  it('refuses other encodings with 415', async () => {
    for (const contentEncoding of ['br', 'deflate', 'zstd', 'gzip, gzip', 'gzip, br']) {
      const { stream } = body([json])
      expect(await refusalAsync(readBody(stream, { contentEncoding }))).toEqual({ status: 415, code: 'unsupported_encoding' })
    }
  })
})
