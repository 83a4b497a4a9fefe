// sample_rows: GET /v1/tables/{table}/sample (read), the rows as JSON text.
import * as v from 'valibot'
import { SampleQuery, tableSample } from '../../routes/tables.ts'
import { tool } from '../tool.ts'

export const sampleRows = tool({
  name: 'sample_rows',
  description: 'The first rows of a table’s newest data file, with the snapshot and the file they come from.',
  input: v.object({ table: v.pipe(v.string(), v.description('<warehouse>.<namespace>.<table>')), ...SampleQuery.entries }),
  level: 'read',
  run: async (c, { table, limit }) => tableSample(c, table, limit),
})
