// Differential property tests of the intake (issue 15, "Fuzzing"; the NDJSON framing, issue 30):
// for any byte string, the edge's array splitter, JSON.parse (the reference: a strict UTF-8 decode, then ECMAScript's JSON) and the
// roller's line parser agree on the elements, in order, or the edge refuses with a 400 and, for
// malformed JSON, the offset of a byte of the body. Bounded here (FUZZ_RUNS, default 300 per
// property); `npm run fuzz -- --runs N` runs them longer.
import { gzipSync } from 'node:zlib'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ApiError } from '../../../edge/errors.ts'
import { readBody } from '../../../edge/body.ts'
import { splitBatch } from '../../../edge/intake.ts'
import { parseLine } from '../../../iceberg/ingest/scan.ts'
import { parseLossless } from '../../../iceberg/spec/json.ts'

const RUNS = Number(process.env.FUZZ_RUNS ?? 300)
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined
const params = { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) }
const MAX_DEPTH = 512

const enc = (s: string) => new TextEncoder().encode(s)
// fatal: invalid UTF-8 is not JSON text; the default ignoreBOM: false drops one leading BOM, as the edge does.
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })

/** The reference: the elements JSON.parse finds in the body, or why it is not a JSON array. */
function reference(bytes: Uint8Array): { elements: unknown[]; text: string } | { refused: 'not_utf8' | 'not_json' | 'not_an_array' } {
  let text: string
  try {
    text = strictUtf8.decode(bytes)
  } catch {
    return { refused: 'not_utf8' }
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { refused: 'not_json' }
  }
  return Array.isArray(value) ? { elements: value, text } : { refused: 'not_an_array' }
}

/** Nesting depth of a parsed value, the outer array counted as 1. */
function depth(v: unknown): number {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depth))
  if (v !== null && typeof v === 'object') return 1 + Math.max(0, ...Object.values(v).map(depth))
  return 0
}

const isObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v)

/**
 * The edge's answer for `bytes`, checked against the reference: a refusal is a 400 (malformed JSON
 * with an offset inside the body), and only when the reference refuses too (or nests too deep);
 * otherwise one line per element, each parsing — by JSON.parse and by the roller's lossless parser —
 * to that element.
 */
function checkAgainstReference(bytes: Uint8Array): void {
  const ref = reference(bytes)
  let batch: ReturnType<typeof splitBatch>
  try {
    batch = splitBatch(bytes)
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    expect(err.status).toBe(400)
    expect(['malformed_json', 'not_an_array']).toContain(err.code)
    if (err.code === 'malformed_json') {
      const offset = (err.details as { offset: number }).offset
      expect(Number.isInteger(offset) && offset >= 0 && offset <= bytes.length).toBe(true)
    }
    if ('elements' in ref) expect(depth(ref.elements)).toBeGreaterThan(MAX_DEPTH)
    return
  }
  if (!('elements' in ref)) throw new Error(`the edge took a body the reference refuses (${ref.refused}): ${JSON.stringify(new TextDecoder().decode(bytes))}`)
  const text = new TextDecoder().decode(batch.ndjson)
  const lines = text === '' ? [] : text.slice(0, -1).split('\n')
  expect(text === '' || text.endsWith('\n')).toBe(true)
  expect(lines.length).toBe(ref.elements.length)
  // A member repeated with another value: JSON.parse keeps the last, the roller refuses to guess (the
  // row is rejected, iceberg/spec/json.ts); the edge stores it as sent either way.
  const duplicate = (err: unknown) => /^Duplicate key /.test((err as Error).message)
  let lossless: unknown[] | null = null
  try {
    lossless = parseLossless(ref.text) as unknown[]
  } catch (err) {
    if (!duplicate(err)) throw err
  }
  ref.elements.forEach((element, i) => {
    expect(JSON.parse(lines[i])).toEqual(element)
    if (lossless) expect(parseLine(lines[i])).toEqual(lossless[i])
    else {
      try {
        parseLine(lines[i])
      } catch (err) {
        if (!duplicate(err)) throw err
      }
    }
  })
  const notObjects = ref.elements.flatMap((e, i) => (isObject(e) ? [] : [i]))
  expect(batch.accepted).toBe(ref.elements.length - notObjects.length)
  expect(batch.reasons).toEqual(notObjects.map((index) => ({ index, reason: 'not_an_object' })))
}

// ---- arbitraries ------------------------------------------------------------------------------------

/** A JSON string literal as a producer might write it: every escape, raw Unicode, astral pairs. */
const stringLiteral = fc
  .array(
    fc.oneof(
      fc.constantFrom('\\"', '\\\\', '\\/', '\\b', '\\f', '\\n', '\\r', '\\t', '\\u00e9', '\\uD834\\uDD1E', '\\ud800', '\\u0000'),
      fc.string({ unit: 'grapheme', maxLength: 3 }).map((s) => [...s].filter((ch) => ch !== '"' && ch !== '\\' && ch.codePointAt(0)! >= 0x20).join('')),
    ),
    { maxLength: 8 },
  )
  .map((parts) => `"${parts.join('')}"`)

/** A JSON number as text: huge integers and decimals past double precision, exponents, -0. */
const numberLiteral = fc.oneof(
  fc.bigInt({ min: -(2n ** 200n), max: 2n ** 200n }).map(String),
  fc.tuple(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), fc.bigInt({ min: 0n, max: 10n ** 38n })).map(([i, f]) => `${i}.${f}`),
  fc
    .tuple(fc.integer({ min: -9, max: 9 }), fc.integer({ min: -400, max: 400 }), fc.constantFrom('e', 'E', 'e+', 'E-'))
    .map(([m, e, s]) => `${m}${s}${Math.abs(e)}`),
  fc.constantFrom('-0', '0', '0.0', '1e308', '-1e-400', '9223372036854775807', '-9223372036854775808'),
)

const ws = fc.constantFrom('', ' ', '\n', '\r\n', '\t', '  \n  ')

/** JSON text of a value, with whitespace anywhere it is allowed. */
const valueText: fc.Memo<string> = fc.memo((n) =>
  n <= 1
    ? fc.oneof(stringLiteral, numberLiteral, fc.constantFrom('true', 'false', 'null'))
    : fc.oneof(
        { weight: 2, arbitrary: fc.oneof(stringLiteral, numberLiteral, fc.constantFrom('true', 'false', 'null')) },
        fc
          .uniqueArray(fc.tuple(stringLiteral, valueText(n - 1), ws, ws), { maxLength: 4, selector: ([k]) => JSON.parse(k) })
          .map((members) => `{${members.map(([k, v, a, b]) => `${a}${k}${b}:${a}${v}${b}`).join(',')}}`),
        fc.array(fc.tuple(valueText(n - 1), ws), { maxLength: 4 }).map((items) => `[${items.map(([v, a]) => `${a}${v}${a}`).join(',')}]`),
      ),
)

/** An object repeating a member, with the same value or another one. */
const duplicated = fc.tuple(stringLiteral, numberLiteral, numberLiteral).map(([k, a, b]) => `{${k}:${a},"x":1,${k}:${b}}`)

/** A body: a JSON array of values (mostly objects), with a BOM sometimes. */
const arrayBody = fc
  .tuple(
    fc.boolean(),
    ws,
    fc.array(
      fc.tuple(fc.oneof({ weight: 6, arbitrary: valueText(4).filter((t) => t.startsWith('{')) }, { weight: 2, arbitrary: valueText(3) }, duplicated), ws),
      {
        maxLength: 6,
      },
    ),
  )
  .map(([bom, w, items]) => `${bom ? '\uFEFF' : ''}${w}[${items.map(([v, a]) => `${a}${v}${a}`).join(',')}]${w}`)

/** Bytes an edit away from a valid body: a byte flipped, inserted or deleted. */
const INTERESTING = [...'[]{}",:\\ \n0-+.eEtfnu']
  .map((c) => c.charCodeAt(0))
  .concat([0x00, 0x1f, 0x7f, 0x80, 0xbf, 0xc3, 0xe2, 0xed, 0xef, 0xbb, 0xf0, 0xf4, 0xf5, 0xff])
const mutated = fc
  .tuple(
    arrayBody.map(enc),
    fc.array(fc.tuple(fc.nat(), fc.constantFrom('flip', 'insert', 'delete'), fc.constantFrom(...INTERESTING), fc.nat(7)), { minLength: 1, maxLength: 3 }),
  )
  .map(([bytes, edits]) => {
    let b = Array.from(bytes)
    for (const [at, op, byte, bit] of edits) {
      const i = b.length === 0 ? 0 : at % (b.length + (op === 'insert' ? 1 : 0))
      if (op === 'insert') b.splice(i, 0, byte)
      else if (b.length > 0 && op === 'delete') b.splice(i, 1)
      else if (b.length > 0) b[i] ^= 1 << bit
    }
    b = b.slice(0, 4096)
    return new Uint8Array(b)
  })

// ---- properties -------------------------------------------------------------------------------------

describe('the splitter against JSON.parse and the roller’s parser', () => {
  it('splits every valid array into its elements (every escape, huge numbers, whitespace, BOM)', () => {
    fc.assert(
      fc.property(arrayBody, (body) => checkAgainstReference(enc(body))),
      params,
    )
  })

  it('agrees on any edit of a valid body, or refuses with a 400 and an offset', () => {
    fc.assert(
      fc.property(mutated, (bytes) => checkAgainstReference(bytes)),
      params,
    )
  })

  it('agrees on arbitrary bytes, or refuses with a 400 and an offset', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 256 }), (bytes) => checkAgainstReference(bytes)),
      params,
    )
  })

  it('refuses nesting past 512 levels and takes it up to there', () => {
    fc.assert(
      fc.property(fc.integer({ min: MAX_DEPTH - 3, max: MAX_DEPTH + 3 }), fc.constantFrom('[', '{"a":'), (levels, open) => {
        const close = open === '[' ? ']' : '}'
        const body = enc(`[${open.repeat(levels - 1)}1${close.repeat(levels - 1)}]`)
        checkAgainstReference(body)
        let refused = false
        try {
          splitBatch(body)
        } catch {
          refused = true
        }
        expect(refused).toBe(levels > MAX_DEPTH)
      }),
      { ...params, numRuns: Math.min(RUNS, 50) },
    )
  })
})

// ---- the NDJSON framing -----------------------------------------------------------------------------

/** The reference for NDJSON: a strict UTF-8 decode, the lines split on LF, blank ones dropped, each JSON.parse'd. */
function referenceLines(bytes: Uint8Array): unknown[] | null {
  let text: string
  try {
    text = strictUtf8.decode(bytes)
  } catch {
    return null
  }
  try {
    return text
      .split('\n')
      .filter((line) => !/^[ \t\r]*$/.test(line))
      .map((line) => JSON.parse(line))
  } catch {
    return null
  }
}

/** splitBatch(bytes, 'lines') against the reference: the same elements in order, or a 400 only where it refuses (or nests too deep). */
function checkLines(bytes: Uint8Array): void {
  const ref = referenceLines(bytes)
  let batch: ReturnType<typeof splitBatch>
  try {
    batch = splitBatch(bytes, 'lines')
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    expect([err.status, err.code]).toEqual([400, 'malformed_json'])
    const offset = (err.details as { offset: number }).offset
    expect(Number.isInteger(offset) && offset >= 0 && offset <= bytes.length).toBe(true)
    if (ref) expect(depth(ref)).toBeGreaterThan(MAX_DEPTH)
    return
  }
  if (!ref) throw new Error(`the edge took NDJSON the reference refuses: ${JSON.stringify(new TextDecoder().decode(bytes))}`)
  const text = new TextDecoder().decode(batch.ndjson)
  const lines = text === '' ? [] : text.slice(0, -1).split('\n')
  expect(lines.map((l) => JSON.parse(l))).toEqual(ref)
  const notObjects = ref.flatMap((e, i) => (isObject(e) ? [] : [i]))
  expect(batch.reasons).toEqual(notObjects.map((index) => ({ index, reason: 'not_an_object' })))
}

/** Elements on one line each: a line break in valueText's text is whitespace (never inside a string), folded to a space. */
const lineElements = fc.array(
  fc.tuple(
    fc.oneof({ weight: 4, arbitrary: valueText(4).filter((t) => t.startsWith('{')) }, valueText(3)).map((t) => t.replace(/\r?\n/g, ' ')),
    fc.constantFrom('\n', '\r\n', '\n\n', ' \n\t\n'),
  ),
  { maxLength: 6 },
)

/** NDJSON of those elements, with blank lines, CRLF, a BOM and no final newline at times; and the same elements as an array. */
const linesAndArray = fc.tuple(fc.boolean(), lineElements, fc.boolean()).map(([bom, items, last]) => {
  const body = items.map(([v, sep]) => v + sep).join('')
  return { lines: `${bom ? '\uFEFF' : ''}${last ? body : body.replace(/\s+$/, '')}`, array: `[${items.map(([v]) => v).join(',')}]` }
})
const linesBody = linesAndArray.map((b) => b.lines)

describe('the NDJSON framing against JSON.parse per line', () => {
  it('splits every valid NDJSON body as the array framing splits the same elements', () => {
    fc.assert(
      fc.property(linesAndArray, ({ lines, array }) => {
        expect(referenceLines(enc(lines))).not.toBeNull()
        checkLines(enc(lines))
        expect(splitBatch(enc(lines), 'lines')).toEqual(splitBatch(enc(array)))
      }),
      params,
    )
  })

  it('agrees on any edit of a valid body, and on arbitrary bytes, or refuses with a 400 and an offset', () => {
    const mutatedLines = fc.tuple(linesBody.map(enc), fc.nat(), fc.constantFrom(...INTERESTING)).map(([b, at, byte]) => {
      const out = Array.from(b)
      out.splice(b.length === 0 ? 0 : at % (b.length + 1), 0, byte)
      return new Uint8Array(out)
    })
    fc.assert(
      fc.property(fc.oneof(mutatedLines, fc.uint8Array({ maxLength: 256 })), (bytes) => checkLines(bytes)),
      params,
    )
  })
})

describe('readBody with gzip', () => {
  it('gives back exactly what was compressed, in any chunking, or 413 past the limit (bombs included)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ minLength: 1, maxLength: 2048 }),
          fc.integer({ min: 1, max: 64 * 1024 }).map((n) => new Uint8Array(n)),
        ),
        fc.integer({ min: 1, max: 4096 }),
        fc.integer({ min: 1, max: 512 }),
        async (plain, limit, chunk) => {
          const gz = gzipSync(plain)
          const stream = new ReadableStream<Uint8Array>({
            start(controller) {
              for (let i = 0; i < gz.length; i += chunk) controller.enqueue(gz.subarray(i, i + chunk))
              controller.close()
            },
          })
          try {
            const got = await readBody(stream, { contentEncoding: 'gzip', limit })
            expect(plain.length).toBeLessThanOrEqual(limit)
            expect(Buffer.from(got).equals(Buffer.from(plain))).toBe(true)
          } catch (err) {
            if (!(err instanceof ApiError)) throw err
            expect([err.status, err.code, plain.length > limit]).toEqual([413, 'payload_too_large', true])
          }
        },
      ),
      { ...params, numRuns: Math.min(RUNS, 200) },
    )
  })
})
