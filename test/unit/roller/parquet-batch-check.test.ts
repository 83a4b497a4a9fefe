// The roll's checker reads a Parquet batch (a scheduled SQL run's) with the rules of JSON rows, keyed or
// not, and rejects one over 256 MiB whole (batch_too_large), unread.
import { parquetWriteBuffer } from 'hyparquet-writer'
import { describe, expect, it } from 'vitest'
import { parquetBatchKey } from '../../../contract/bucket.ts'
import type { Schema } from '../../../iceberg/spec/types.ts'
import { BatchChecker } from '../../../roller/validate.ts'
import { MemoryBucket } from './memory-bucket.ts'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'x', type: 'long', required: true },
    { id: 2, name: 'who', type: 'string', required: false },
    { id: 3, name: '__ingest_ts', type: 'timestamptz', required: false },
  ],
}

async function stored(b: MemoryBucket, id: string): Promise<{ batchId: string; key: string; size: number }> {
  const body = new Uint8Array(
    parquetWriteBuffer({
      columnData: [
        { name: 'x', data: [1, 2.5, 3], type: 'DOUBLE' },
        { name: 'who', data: ['a', 'b', null], type: 'STRING' },
      ],
    }),
  )
  const key = parquetBatchKey('snk_1', id)
  await b.put(key, body, { metadata: { received: '2026-12-02T03:00:00.000000Z', rows: '3', sink: 'snk_1' } })
  return { batchId: id, key, size: body.length }
}

describe('Parquet batches in the roll', () => {
  it('checks each row as its JSON: an integral double fits a long, 2.5 is a type_mismatch', async () => {
    const b = new MemoryBucket()
    for (const key of [null, ['x']]) {
      const checked = await new BatchChecker(schema, 2, key).check(b, await stored(b, `run-${key ? 'keyed' : 'append'}`))
      expect({ rows: checked?.rows, rejected: checked?.rejected }).toEqual({ rows: 2, rejected: 1 })
      expect(JSON.parse(checked!.rejectLines[0])).toMatchObject({ index: 1, reason: 'type_mismatch', field: 'x', row: { x: 2.5, who: 'b' } })
    }
  })

  it('rejects a Parquet batch over 256 MiB whole and a broken one as batch_unreadable', async () => {
    const b = new MemoryBucket()
    const batch = await stored(b, 'big')
    const big = await new BatchChecker(schema, 2).check(b, { ...batch, size: 256 * 1024 * 1024 + 1 })
    expect(JSON.parse(big!.rejectLines[0])).toMatchObject({ reason: 'batch_too_large', error: expect.stringMatching(/Parquet may be 256 MiB/) })
    expect(big!.rejected).toBe(3)
    await b.put(parquetBatchKey('snk_1', 'broken'), 'not parquet', { metadata: { rows: '4' } })
    const broken = await new BatchChecker(schema, 2).check(b, { batchId: 'broken', key: parquetBatchKey('snk_1', 'broken'), size: 11 })
    expect(JSON.parse(broken!.rejectLines[0])).toMatchObject({ reason: 'batch_unreadable' })
    expect(broken!.rejected).toBe(4)
  })
})
