// The soak's warehouses and sinks. Two warehouses share the bucket, both reached through the bucket's
// fault proxy: `soak`, whose catalog is the embedded SQL catalog, and `soakrest`, whose catalog is
// the Apache REST fixture behind a fault proxy of its own. Sinks take turns over three kinds on the
// SQL catalog — an append sink (v2), a keyed sink (v2), a day-partitioned v3 sink — and over append
// and keyed on the REST catalog (the fixture, Iceberg 1.10, is not asked for v3 tables).
import { api, type BenchStack } from '../bench/common.ts'
import type { SoakSink } from './producer.ts'

type Catalog = 'sql' | 'rest'

export interface SoakWarehouses {
  sql: { id: string; name: string }
  rest: { id: string; name: string; uri: string } | null
}

const POLICY = { roll_seconds: 60, inactivity_seconds: 10 }

const TABLES: Record<SoakSink['kind'], Record<string, unknown>> = {
  append: {
    columns: [
      { name: 'id', type: 'long', required: true },
      { name: 'producer', type: 'int' },
      { name: 'who', type: 'string' },
      { name: 'n', type: 'long' },
    ],
  },
  keyed: {
    columns: [
      { name: 'k', type: 'long', required: true },
      { name: 'v', type: 'long' },
      { name: 'who', type: 'string' },
    ],
  },
  daily: {
    format_version: 3,
    partition: ['day(ts)'],
    columns: [
      { name: 'id', type: 'long', required: true },
      { name: 'ts', type: 'timestamptz', required: true },
      { name: 'who', type: 'string' },
    ],
  },
}

/** The two warehouses; `restUri`: the REST catalog's address as the roller reaches it (its fault proxy), null for none. */
export async function createWarehouses(b: BenchStack, bucketUrl: string, restUri: string | null): Promise<SoakWarehouses> {
  const { stack } = b
  const where = { bucket: stack.s3.bucket, endpoint: bucketUrl, region: stack.s3.region }
  const sql = await api(stack, b.apiKey, 'POST', '/v1/warehouses', { name: 'soak', catalog: { type: 'sql' }, ...where })
  const rest = restUri ? await api(stack, b.apiKey, 'POST', '/v1/warehouses', { name: 'soakrest', catalog: { type: 'rest', uri: restUri }, ...where }) : null
  return { sql: { id: sql.id, name: 'soak' }, rest: rest ? { id: rest.id, name: 'soakrest', uri: restUri! } : null }
}

/** `count` sinks, every other one on the REST catalog when there is one, made `parallel` at a time. */
export async function createSinks(b: BenchStack, w: SoakWarehouses, count: number, parallel = 8): Promise<SoakSink[]> {
  const plan = Array.from({ length: count }, (_, i) => {
    const catalog: Catalog = w.rest && i % 2 === 1 ? 'rest' : 'sql'
    const n = catalog === 'rest' ? (i - 1) / 2 : w.rest ? i / 2 : i
    const kinds: Array<SoakSink['kind']> = catalog === 'rest' ? ['append', 'keyed'] : ['append', 'keyed', 'daily']
    return { i, catalog, kind: kinds[n % kinds.length] }
  })
  const sinks: SoakSink[] = new Array(count)
  let next = 0
  const worker = async () => {
    for (let at = next++; at < plan.length; at = next++) {
      const { i, catalog, kind } = plan[at]
      const warehouse = catalog === 'rest' ? w.rest!.name : w.sql.name
      const table = `soak.${kind}${String(i).padStart(3, '0')}`
      await api(b.stack, b.apiKey, 'POST', '/v1/tables', { warehouse, table, doc: `soak: ${kind}`, ...TABLES[kind] })
      const made = await api(b.stack, b.apiKey, 'POST', '/v1/sinks', {
        warehouse,
        table,
        name: `${kind}${String(i).padStart(3, '0')}`,
        ...POLICY,
        ...(kind === 'keyed' ? { key: ['k'] } : {}),
      })
      sinks[i] = { kind, catalog, id: made.id, sendKey: made.send_key, table, batches: new Set(), ids: new Set(), latest: new Map(), bad: [] }
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker))
  return sinks
}
