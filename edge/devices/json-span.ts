// A device payload as spans of its bytes: every value knows where it starts and ends, so a mapping
// copies a value exactly as the device sent it (DESIGN.md "Lossless JSON") and a strip rebuilds an
// object from its members' own bytes. Strings and numbers are validated by the intake's scanners.
import { ApiError } from '../errors.ts'
import { scanNumber, scanString } from '../intake.ts'

interface Span {
  start: number
  end: number
}
interface Member {
  key: string
  /** The key's bytes with their quotes. */
  keySpan: Span
  value: JsonNode
}
export type JsonNode =
  | (Span & { kind: 'object'; members: Member[] })
  | (Span & { kind: 'array'; items: JsonNode[] })
  | (Span & { kind: 'string' | 'number' | 'true' | 'false' | 'null' })

const MAX_DEPTH = 512
const utf8 = new TextDecoder()

const malformed = (offset: number, what: string) => new ApiError(400, 'malformed_json', `malformed JSON: ${what} at byte ${offset}`, { offset })

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d

/** Parses one JSON text (RFC 8259; a leading BOM skipped) into spans; 400 malformed_json with the offset otherwise. */
export function parseJson(bytes: Uint8Array): JsonNode {
  let i = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
  const skip = () => {
    while (i < bytes.length && isSpace(bytes[i])) i++
  }
  const expect = (c: number, what: string) => {
    skip()
    if (bytes[i] !== c) throw malformed(i, i >= bytes.length ? 'unexpected end of input' : `expected ${what}`)
    i++
  }
  const value = (depth: number): JsonNode => {
    skip()
    const start = i
    const c = bytes[i]
    if (c === 0x7b || c === 0x5b) {
      if (depth >= MAX_DEPTH) throw malformed(i, `nesting deeper than ${MAX_DEPTH} levels`)
      i++
      skip()
      const close = c === 0x7b ? 0x7d : 0x5d
      const members: Member[] = []
      const items: JsonNode[] = []
      if (bytes[i] === close) i++
      else
        for (;;) {
          if (c === 0x7b) {
            skip()
            if (bytes[i] !== 0x22) throw malformed(i, 'expected a member name')
            const keyStart = i
            i = scanString(bytes, i)
            const keySpan = { start: keyStart, end: i }
            expect(0x3a, "':'")
            members.push({ key: decodeString(bytes, keySpan), keySpan, value: value(depth + 1) })
          } else items.push(value(depth + 1))
          skip()
          if (bytes[i] === 0x2c) {
            i++
            continue
          }
          if (bytes[i] === close) {
            i++
            break
          }
          throw malformed(i, i >= bytes.length ? 'unexpected end of input' : `expected ',' or '${String.fromCharCode(close)}'`)
        }
      return c === 0x7b ? { kind: 'object', start, end: i, members } : { kind: 'array', start, end: i, items }
    }
    if (c === 0x22) {
      i = scanString(bytes, i)
      return { kind: 'string', start, end: i }
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      i = scanNumber(bytes, i)
      return { kind: 'number', start, end: i }
    }
    for (const lit of ['true', 'false', 'null'] as const) {
      if (c === lit.charCodeAt(0)) {
        for (let k = 1; k < lit.length; k++) if (bytes[i + k] !== lit.charCodeAt(k)) throw malformed(i + k, 'unexpected byte')
        i += lit.length
        return { kind: lit, start, end: i }
      }
    }
    throw malformed(i, i >= bytes.length ? 'unexpected end of input' : 'unexpected byte')
  }
  const root = value(1)
  skip()
  if (i < bytes.length) throw malformed(i, 'data after the value')
  return root
}

/** A string node's (or key's) text. The scanner has validated it, so JSON.parse sees a string only. */
export function decodeString(bytes: Uint8Array, span: Span): string {
  const inner = bytes.subarray(span.start + 1, span.end - 1)
  return inner.includes(0x5c) ? JSON.parse(utf8.decode(bytes.subarray(span.start, span.end))) : utf8.decode(inner)
}

/** The bytes of a node as sent. */
export const bytesOf = (bytes: Uint8Array, node: Span): Uint8Array => bytes.subarray(node.start, node.end)

/** RFC 6901: "/a/b~1c/0" → ["a", "b/c", "0"]; "" is the whole document. Null for text that is no pointer. */
export function pointerTokens(pointer: string): string[] | null {
  if (pointer === '') return []
  if (!pointer.startsWith('/')) return null
  const tokens = pointer.slice(1).split('/')
  if (tokens.some((t) => /~[^01]|~$/.test(t))) return null
  return tokens.map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'))
}

/** The node a pointer selects, or undefined. A repeated member name selects the last (as JSON.parse would). */
export function select(node: JsonNode, tokens: string[]): JsonNode | undefined {
  let at: JsonNode | undefined = node
  for (const t of tokens) {
    if (!at) return undefined
    if (at.kind === 'object') at = at.members.findLast((m) => m.key === t)?.value
    else if (at.kind === 'array') at = /^(0|[1-9]\d*)$/.test(t) ? at.items[Number(t)] : undefined
    else return undefined
  }
  return at
}
