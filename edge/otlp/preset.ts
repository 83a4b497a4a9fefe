// The otlp_logs preset: the columns a sink's table needs for OpenTelemetry logs, and the check of a
// sink's table against them (409 otlp_table_mismatch with the create line). The times are nanoseconds
// in OTLP: a timestamptz_ns column keeps them whole, a timestamptz one keeps microseconds.
import { currentSchema, type TableMetadata } from '../../iceberg/spec/metadata.ts'
import { isPrimitive, parsePrimitive, type IcebergType } from '../../iceberg/spec/types.ts'
import { INGEST_TS } from '../../contract/table.ts'
import { ApiError } from '../errors.ts'

export const PRESET = 'otlp_logs'

/** Every column and the type the create line gives it (format-version 3 for the _ns types). */
export const OTLP_LOGS_COLUMNS: Record<string, string> = {
  time: 'timestamptz_ns',
  observed_time: 'timestamptz_ns',
  severity_number: 'int',
  severity_text: 'string',
  body: 'string',
  attributes: 'string',
  resource: 'string',
  scope: 'string',
  service_name: 'string',
  trace_id: 'string',
  span_id: 'string',
}

/** What a column may be instead: a time in microseconds, a severity as long. */
const ALSO: Record<string, string[]> = { timestamptz_ns: ['timestamptz'], int: ['long'] }

export const CREATE_LINE = `lhbox table create <warehouse>.<ns>.<table> --format-version 3${Object.entries(OTLP_LOGS_COLUMNS)
  .map(([n, t]) => ` --column ${n}:${t}`)
  .join('')}`

/** How the table holds the two times: nanoseconds (timestamptz_ns) or microseconds. */
export interface Shape {
  timeNs: boolean
  observedNs: boolean
}

const kindOf = (t: IcebergType) => (isPrimitive(t) ? parsePrimitive(t).kind : t.type)

/** The table's shape for OTLP logs; 409 otlp_table_mismatch naming the columns that do not fit and the create line. */
export function checkTable(meta: TableMetadata, table: string): Shape {
  const fields = new Map(currentSchema(meta).fields.map((f) => [f.name, f]))
  const wrong = Object.entries(OTLP_LOGS_COLUMNS).filter(([name, type]) => {
    const f = fields.get(name)
    return !f || ![type, ...(ALSO[type] ?? [])].includes(kindOf(f.type))
  })
  // A required column the preset does not fill would reject every row.
  const required = currentSchema(meta).fields.filter(
    (f) => f.required && !(f.name in OTLP_LOGS_COLUMNS) && f.name !== INGEST_TS && f['write-default'] === undefined,
  )
  if (wrong.length > 0 || required.length > 0) {
    const what = [
      ...wrong.map(
        ([n, t]) =>
          `${n} (${t}${ALSO[t] ? ` or ${ALSO[t].join(' or ')}` : ''}): ${fields.has(n) ? `the table has it as ${JSON.stringify(fields.get(n)!.type)}` : 'missing'}`,
      ),
      ...required.map((f) => `${f.name}: required, and OTLP logs do not fill it`),
    ]
    throw new ApiError(
      409,
      'otlp_table_mismatch',
      `the sink's table ${table} does not take OTLP logs (preset ${PRESET}): ${what.join('; ')}. Create it with: ${CREATE_LINE}`,
      {
        preset: PRESET,
        columns: Object.entries(OTLP_LOGS_COLUMNS).map(([name, type]) => ({ name, type })),
        command: CREATE_LINE,
      },
    )
  }
  return { timeNs: kindOf(fields.get('time')!.type) === 'timestamptz_ns', observedNs: kindOf(fields.get('observed_time')!.type) === 'timestamptz_ns' }
}
