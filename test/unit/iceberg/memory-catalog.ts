// An in-memory FileIO and Catalog for unit tests of commits:
// requirements are checked as a catalog would, so a stale base gets a CommitConflict.
import {
  CommitConflict,
  type Catalog,
  type CommitOptions,
  type CreateTableRequest,
  type LoadedTable,
  type TableIdentifier,
} from '../../../iceberg/catalog/index.ts'
import { FileNotFound, type FileIO } from '../../../iceberg/io/file-io.ts'
import { newTableMetadata, serializeMetadata } from '../../../iceberg/spec/metadata.ts'
import { applyUpdates, requirementFailure, type TableRequirement, type TableUpdate } from '../../../iceberg/spec/updates.ts'

export const LOC = 's3://bucket/wh/ns/t'

export class MemoryIO implements FileIO {
  files = new Map<string, { bytes: Uint8Array; at: number }>()
  clock = 1_000_000
  reads = 0
  async read(location: string) {
    const f = this.files.get(location)
    if (!f) throw new FileNotFound(location)
    this.reads++
    return f.bytes
  }
  async write(location: string, bytes: Uint8Array | string) {
    this.files.set(location, { bytes: typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes, at: this.clock++ })
  }
  async delete(locations: string[]) {
    for (const l of locations) this.files.delete(l)
  }
  async *list(prefix: string) {
    for (const [location, f] of this.files) if (location.startsWith(prefix)) yield { location, size: f.bytes.length, lastModified: new Date(f.at) }
  }
}

export class MemoryCatalog implements Catalog {
  readonly name = 'mem'
  current!: LoadedTable
  commits = 0
  conflicts = 0
  /** Runs once before the next commit is checked (a racing writer). */
  beforeCommit: (() => Promise<void>) | undefined
  /** When set, the time (ms) each snapshot committed from now on carries: a catalog clock the test sets. */
  snapshotClock: (() => number) | undefined
  constructor(readonly io: MemoryIO) {}
  async listNamespaces() {
    return [['ns']]
  }
  async ensureNamespace() {}
  async listTables() {
    return [this.current.identifier]
  }
  async loadTable(_id: TableIdentifier) {
    return this.current
  }
  async createTable(namespace: string[], req: CreateTableRequest) {
    const metadata = newTableMetadata({
      location: LOC,
      schema: req.schema,
      partitionFields: req.partition,
      formatVersion: req.formatVersion ?? 2,
      properties: req.properties,
    })
    const metadataLocation = `${LOC}/metadata/00000.metadata.json`
    await this.io.write(metadataLocation, serializeMetadata(metadata))
    this.current = { identifier: { namespace, name: req.name }, metadataLocation, metadata, io: this.io }
    return this.current
  }
  async commitTable(table: LoadedTable, requirements: TableRequirement[], updates: TableUpdate[], opts: CommitOptions = {}) {
    await opts.ready
    const race = this.beforeCommit
    this.beforeCommit = undefined
    if (race) await race()
    const failure = requirementFailure(this.current.metadata, requirements)
    if (failure) {
      this.conflicts++
      throw new CommitConflict(failure)
    }
    const clock = this.snapshotClock
    if (clock) updates = updates.map((u) => (u.action === 'add-snapshot' ? { ...u, snapshot: { ...u.snapshot, 'timestamp-ms': clock() } } : u))
    const metadata = applyUpdates(this.current.metadata, updates, { previousMetadataLocation: this.current.metadataLocation })
    const metadataLocation = `${LOC}/metadata/${String(++this.commits).padStart(5, '0')}.metadata.json`
    await this.io.write(metadataLocation, serializeMetadata(metadata))
    this.current = { identifier: table.identifier, metadataLocation, metadata, io: this.io }
    return this.current
  }
}

/** A table of (id long, d int) partitioned by identity(d), in a fresh in-memory catalog. */
export async function partitionedTable(properties: Record<string, string> = {}, formatVersion: 2 | 3 = 2): Promise<MemoryCatalog> {
  const catalog = new MemoryCatalog(new MemoryIO())
  await catalog.createTable(['ns'], {
    name: 't',
    formatVersion,
    properties,
    partition: [{ source: 'd', transform: 'identity' }],
    schema: {
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        { id: 2, name: 'd', required: false, type: 'int' },
      ],
    },
  })
  return catalog
}
