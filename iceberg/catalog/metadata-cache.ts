// Parsed table metadata by location. A metadata file never changes once written, so a location seen
// before needs no second read: a catalog that learns the current location (one row, one request)
// skips the GET and the parse of the file when it holds it.
import type { TableMetadata } from '../spec/metadata.ts'

/** What a catalog uses of a cache: one location's metadata, and `size` (its JSON's length) when it is kept. */
export interface MetadataLookup {
  get(location: string): TableMetadata | undefined
  set(location: string, metadata: TableMetadata, size: number): void
}

export class MetadataCache implements MetadataLookup {
  private readonly entries = new Map<string, { metadata: TableMetadata; size: number }>()
  private held = 0

  /**
   * `max` locations kept, and at most `maxSize` characters of their JSON together, the least
   * recently used dropped first; a file larger than `maxSize` is not kept.
   */
  constructor(
    private readonly max = 1024,
    private readonly maxSize = Number.POSITIVE_INFINITY,
  ) {}

  get(location: string): TableMetadata | undefined {
    const e = this.entries.get(location)
    if (e) {
      this.entries.delete(location)
      this.entries.set(location, e)
    }
    return e?.metadata
  }

  set(location: string, metadata: TableMetadata, size: number): void {
    this.drop(location)
    if (size > this.maxSize) return
    this.entries.set(location, { metadata, size })
    this.held += size
    while (this.entries.size > this.max || this.held > this.maxSize) this.drop(this.entries.keys().next().value as string)
  }

  /** The same entries as seen from one store: its locations apart from another store's same paths. */
  within(store: string): MetadataLookup {
    const key = (location: string) => `${store}\n${location}`
    return { get: (location) => this.get(key(location)), set: (location, metadata, size) => this.set(key(location), metadata, size) }
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
