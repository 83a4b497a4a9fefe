// splitBatch's NDJSON framing (application/x-ndjson, application/jsonl): the same scanner as the array
// framing, one element a line. What is stored must be what the same elements sent as an array store.
import { describe, expect, it } from 'vitest'
import { ApiError } from '../../../edge/errors.ts'
import { splitBatch } from '../../../edge/intake.ts'

const enc = (s: string) => new TextEncoder().encode(s)
const dec = (b: Uint8Array) => new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(b)
const lines = (s: string | Uint8Array) => {
  const r = splitBatch(typeof s === 'string' ? enc(s) : s, 'lines')
  return { ...r, ndjson: dec(r.ndjson) }
}
const array = (s: string) => {
  const r = splitBatch(enc(s))
  return { ...r, ndjson: dec(r.ndjson) }
}
function bad(s: string) {
  try {
    splitBatch(enc(s), 'lines')
  } catch (e) {
    if (!(e instanceof ApiError)) throw e
    return { status: e.status, code: e.code, ...e.details, message: e.message }
  }
  throw new Error('expected a refusal')
}

describe('splitBatch, NDJSON framing', () => {
  it('stores each line as the array framing stores the same element, byte for byte', () => {
    const elements = ['{"id":9223372036854775807,"x":0.1000000000000000055511151231257827}', '{"s":"\\u00e9\\uD83D\\uDE00","r":"é😀中"}', '{"n":-0,"e":1E+400}']
    const fromLines = lines(`${elements.join('\n')}\n`)
    expect(fromLines).toEqual(array(`[${elements.join(',')}]`))
    expect(fromLines.ndjson).toBe(`${elements.join('\n')}\n`)
    expect(fromLines).toMatchObject({ accepted: 3, rejected: 0, reasons: [] })
  })

  it('takes a last line with no newline (as Vector sends it), CRLF, blank lines and spaces around elements', () => {
    const want = { ndjson: '{"a":1}\n{"b":[2, 3]}\n', accepted: 2, acceptedBytes: 21, rejected: 0, reasons: [] }
    expect(lines('{"a":1}\n{"b":[2, 3]}')).toEqual(want)
    expect(lines('{"a":1}\r\n{"b":[2, 3]}\r\n')).toEqual(want)
    expect(lines('\n\n{"a":1}\n\n  \t\n{"b":[2, 3]}\n\n')).toEqual(want)
    expect(lines('  {"a":1}  \n\t{"b":[2, 3]}\t\r\n')).toEqual(want)
    // A CR inside an element is whitespace, folded as in an array.
    expect(lines('{"a":\r1}\n{"b":[2,\r3]}').ndjson).toBe('{"a": 1}\n{"b":[2, 3]}\n')
  })

  it('lists the lines that are not objects as not_an_object, an index counting elements (not blank lines)', () => {
    const r = lines('{"a":1}\n\n[1,2]\n"x"\n{"b":2}\nnull\n42\n')
    expect(r.reasons).toEqual([
      { index: 1, reason: 'not_an_object' },
      { index: 2, reason: 'not_an_object' },
      { index: 4, reason: 'not_an_object' },
      { index: 5, reason: 'not_an_object' },
    ])
    expect(r).toMatchObject({ accepted: 2, rejected: 4, acceptedBytes: 16 })
    // Every element is a line, the rejected ones too: line i is element i.
    expect(r.ndjson).toBe('{"a":1}\n[1,2]\n"x"\n{"b":2}\nnull\n42\n')
    // A whole JSON array on one line is one element, and not an object.
    expect(lines('[{"a":1},{"b":2}]\n')).toMatchObject({ accepted: 0, rejected: 1, reasons: [{ index: 0, reason: 'not_an_object' }] })
  })

  it('answers nothing accepted for a body of blank lines (as for [])', () => {
    expect(lines('\n \r\n\n')).toEqual({ ndjson: '', accepted: 0, acceptedBytes: 0, rejected: 0, reasons: [] })
    expect(lines('\ufeff{"a":1}')).toMatchObject({ ndjson: '{"a":1}\n', accepted: 1 })
  })

  it.each([
    ['a line break inside an element', '{"a":1}\n{"b":\n2}\n', 13, 'line break inside an element'],
    ['a pretty-printed object', '{\n  "a": 1\n}\n', 1, 'line break inside an element'],
    ['two elements on a line', '{"a":1} {"b":2}\n', 8, 'one element a line'],
    ['an array separator', '{"a":1},\n{"b":2}\n', 7, 'one element a line'],
    ['a truncated last line', '{"a":1}\n{"b":', 13, 'unexpected end of input'],
    ['a bare bracket', '{"a":1}\n]\n', 8, 'unexpected byte 0x5d'],
    ['garbage', '{"a":1}\nhello\n', 8, 'unexpected byte 0x68'],
    ['a control character in a string', '{"a":"x\ty"}', 7, 'control character'],
  ])('%s → 400 malformed_json at the first bad byte', (_, body, offset, what) => {
    const r = bad(body)
    expect(r).toMatchObject({ status: 400, code: 'malformed_json', offset })
    expect(r.message).toContain(what)
  })

  it('agrees with the array framing on random bodies', () => {
    // Elements of every kind, compact and spaced; the lines and the array of the same elements store the same.
    const pool = ['{}', '{"a":1}', '{"b":[1,{"c":"d"}]}', '[1]', '"s"', '12.5e3', 'true', 'null', '{ "x" : "é\\n" , "y" : [ ] }']
    let seed = 7
    const next = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff
      return seed
    }
    for (let round = 0; round < 200; round++) {
      const picked = Array.from({ length: next() % 8 }, () => pool[next() % pool.length])
      const gaps = picked.map(() => ['\n', '\r\n', '\n\n', ' \n'][next() % 4])
      const body = picked.map((e, k) => e + gaps[k]).join('')
      const trimmed = next() % 2 === 0 ? body.replace(/\s+$/, '') : body
      expect(lines(trimmed)).toEqual(array(`[${picked.join(',')}]`))
    }
  })

  it('does not modify its input', () => {
    const input = enc('{"a":\r1}\r\n{"b":2}')
    splitBatch(input, 'lines')
    expect(dec(input)).toBe('{"a":\r1}\r\n{"b":2}')
  })
})
