// Parsed table metadata by location. A metadata file never changes once written, so a location seen
// before needs no second read: a catalog that learns the current location (one row, one request)
// skips the GET and the parse of the file when it holds it. A cache that keeps JSON (the REST
// catalog's) also holds each file's text ready for an answer: a load then writes no metadata JSON.
import { parseLossless, stringifyLossless } from '../spec/json.ts'
import { serializeMetadata, type TableMetadata } from '../spec/metadata.ts'

/** One location's metadata, and its JSON text when the cache keeps it (see metadataJson). */
export interface CachedMetadata {
  metadata: TableMetadata
  json?: string
}

/** What a catalog uses of a cache: one location's metadata, and `text` (the file's JSON, as read or written) when it is kept. */
export interface MetadataLookup {
  get(location: string): CachedMetadata | undefined
  /** `written`: `text` is serializeMetadata(metadata) (the catalog wrote it), so it needs no check. */
  set(location: string, metadata: TableMetadata, text: string, written?: boolean): void
}

/**
 * JSON text of `metadata` read from `text` (its file): the file's own text when it says exactly what
 * the metadata says (every engine's file, unknown fields and all, spacing or escapes apart), else the
 * metadata serialized (parseMetadata filled something in, e.g. a format 1 file's defaults, or wrote a
 * number differently). Lossless both ways; costs a serialization, and a second parse only when the
 * texts differ, once per file.
 */
export function metadataJson(text: string, metadata: TableMetadata): string {
  const serialized = serializeMetadata(metadata)
  if (serialized === text) return text
  try {
    if (stringifyLossless(parseLossless(text)) === serialized) return text
  } catch {
    // Unreadable as it stands (parseMetadata read it, so this is not expected): the serialization decides.
  }
  return serialized
}

export class MetadataCache implements MetadataLookup {
  private readonly entries = new Map<string, { value: CachedMetadata; size: number }>()
  private held = 0

  /**
   * `max` locations kept, and at most `maxSize` characters of their JSON together (counted twice
   * where the text is kept too), the least recently used dropped first; a file larger than that is
   * not kept. `keepJson`: hold each file's answer text (metadataJson), for a server that answers it.
   */
  constructor(
    private readonly max = 1024,
    private readonly maxSize = Number.POSITIVE_INFINITY,
    private readonly keepJson = false,
  ) {}

  get(location: string): CachedMetadata | undefined {
    const e = this.entries.get(location)
    if (e) {
      this.entries.delete(location)
      this.entries.set(location, e)
    }
    return e?.value
  }

  set(location: string, metadata: TableMetadata, text: string, written = false): void {
    this.drop(location)
    const size = this.keepJson ? 2 * text.length : text.length
    if (size > this.maxSize) return
    const value = this.keepJson ? { metadata, json: written ? text : metadataJson(text, metadata) } : { metadata }
    this.entries.set(location, { value, size })
    this.held += size
    while (this.entries.size > this.max || this.held > this.maxSize) this.drop(this.entries.keys().next().value as string)
  }

  /** The same entries as seen from one store: its locations apart from another store's same paths. */
  within(store: string): MetadataLookup {
    const key = (location: string) => `${store}\n${location}`
    return { get: (location) => this.get(key(location)), set: (location, metadata, text, written) => this.set(key(location), metadata, text, written) }
  }

  private drop(key: string): void {
    const e = this.entries.get(key)
    if (!e) return
    this.entries.delete(key)
    this.held -= e.size
  }

  get size(): number {
    return this.entries.size
  }

  /** The characters of JSON held. */
  get heldSize(): number {
    return this.held
  }
}
