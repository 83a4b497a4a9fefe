// Engines writing beside the rollers, every 30 s, into two append sinks' tables of the SQL catalog:
// PyIceberg's SqlCatalog (on the database) into the first, DuckDB through lhbox's own Iceberg REST
// catalog (`/iceberg`, the API key as its token) into the second. An answered write's ids must be in
// the table once; an unanswered one's at most once (its commit may or may not have landed).
import type { BenchStack } from '../bench/common.ts'
import { runPython, s3Args, sqlCatalogArgs, toExact } from '../support/python.ts'
import type { SoakSink } from './producer.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export interface BesideWrites {
  engine: 'pyiceberg' | 'duckdb'
  sink: SoakSink
  /** Answered: in the table exactly once. */
  ids: bigint[]
  /** Unanswered: at most once. */
  maybe: bigint[]
  writes: number
}

/** Writes one row for each id; throws when the engine did not answer that it committed. */
type Write = (ids: bigint[], round: number) => Promise<void>

function writer(
  engine: BesideWrites['engine'],
  sink: SoakSink,
  base: bigint,
  write: Write,
  running: () => boolean,
): { done: Promise<void>; out: BesideWrites } {
  const out: BesideWrites = { engine, sink, ids: [], maybe: [], writes: 0 }
  const done = (async () => {
    for (let i = 0; running(); i++) {
      await sleep(30_000)
      if (!running()) break
      const ids = Array.from({ length: 5 }, (_, j) => base + BigInt(i * 5 + j))
      try {
        await write(ids, i)
        out.ids.push(...ids)
        out.writes++
      } catch {
        out.maybe.push(...ids)
      }
    }
  })()
  return { done, out }
}

export function startBesideWriters(b: BenchStack, warehouse: { id: string; name: string }, sinks: SoakSink[], running: () => boolean) {
  const [first, second] = sinks.filter((s) => s.kind === 'append' && s.catalog === 'sql')
  const { stack } = b
  const catalog = sqlCatalogArgs({ databaseUrl: stack.databaseUrl, catalogName: warehouse.id, s3: stack.s3 })
  const py = writer(
    'pyiceberg',
    first,
    9_000_000_000_000n,
    async (ids, round) => {
      const rows = ids.map((id) => ({ id: Number(id), producer: -1, who: 'pyiceberg', n: round }))
      toExact(await runPython('pyiceberg_append.py', [...catalog, first.table], undefined, { input: JSON.stringify(rows) }))
    },
    running,
  )
  const writers = [py]
  if (second) {
    const rest = ['--rest-uri', `${stack.apiUrl}/iceberg`, '--warehouse', warehouse.name, '--rest-token', b.apiKey, ...s3Args(stack.s3)]
    const duck = writer(
      'duckdb',
      second,
      8_000_000_000_000n,
      async (ids, round) => {
        const values = ids.map((id) => `(${id}, -2, 'duckdb', ${round})`).join(', ')
        toExact(await runPython('duckdb_iceberg_sql.py', [...rest, '--exec', `INSERT INTO cat.${second.table} (id, producer, who, n) VALUES ${values}`]))
      },
      running,
    )
    writers.push(duck)
  }
  return { done: Promise.all(writers.map((w) => w.done)), writes: writers.map((w) => w.out) }
}
