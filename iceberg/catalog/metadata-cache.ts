// Parsed table metadata by location. A metadata file never changes once written, so a location seen
// before needs no second read: a catalog that learns the current location (one row, one request)
// skips the GET and the parse of the file when it holds it.
import type { TableMetadata } from '../spec/metadata.ts'

export class MetadataCache {
  private readonly entries = new Map<string, TableMetadata>()

  /** `max` locations kept, the least recently used dropped first. */
  constructor(private readonly max = 1024) {}

  get(location: string): TableMetadata | undefined {
    const m = this.entries.get(location)
    if (m) {
      this.entries.delete(location)
      this.entries.set(location, m)
    }
    return m
  }

  set(location: string, metadata: TableMetadata): void {
    this.entries.delete(location)
    this.entries.set(location, metadata)
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string)
  }

  get size(): number {
    return this.entries.size
  }
}
