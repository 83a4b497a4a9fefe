// A Parquet batch → the JSON lines a producer would send for its rows (iceberg/ingest/parquet-batch.ts).
import { parquetWriteBuffer } from 'hyparquet-writer'
import { describe, expect, it } from 'vitest'
import { JSON_COLUMNS_KEY, ParquetBatchUnreadable, parquetBatchLines } from '../../../iceberg/ingest/parquet-batch.ts'

const lines = async (bytes: Uint8Array) =>
  new TextDecoder()
    .decode((await parquetBatchLines(bytes)).body)
    .trimEnd()
    .split('\n')

describe('parquetBatchLines', () => {
  it('writes each value as its JSON: exact int64, shortest doubles, text, base64 bytes, JSON columns as they are; nulls left out', async () => {
    const file = parquetWriteBuffer({
      columnData: [
        { name: 'big', data: [9223372036854775807n, null], type: 'INT64' },
        { name: 'd', data: [3, 3.5], type: 'DOUBLE' },
        { name: 's', data: ['a "q"', 'b'], type: 'STRING' },
        { name: 'raw', data: ['{"x":[1,2]}', '170141183460469231731687303715884105727'], type: 'STRING' },
        { name: 'bin', data: [new Uint8Array([0, 255]), null], type: 'BYTE_ARRAY' },
      ],
      kvMetadata: [{ key: JSON_COLUMNS_KEY, value: '["raw"]' }],
    })
    expect(await lines(new Uint8Array(file))).toEqual([
      '{"big":9223372036854775807,"d":3,"s":"a \\"q\\"","raw":{"x":[1,2]},"bin":"AP8="}',
      '{"d":3.5,"s":"b","raw":170141183460469231731687303715884105727}',
    ])
  })

  it('says a file is not Parquet', async () => {
    await expect(parquetBatchLines(new TextEncoder().encode('{"x": 1}\n'))).rejects.toBeInstanceOf(ParquetBatchUnreadable)
  })
})
