// describe_sink: what an agent needs before sending: the sink (GET /v1/sinks/{sink}), its table's
// columns with their docs (the catalog's, as GET /v1/tables reads it), the roll policy and key, what
// a valid row is, and a ready example to send.
import * as v from 'valibot'
import { INGEST_TS } from '../../../contract/table.ts'
import { stringifyLossless } from '../../../iceberg/spec/json.ts'
import { currentSchema, defaultSpec } from '../../../iceberg/spec/metadata.ts'
import { warehouseByName } from '../../catalogs.ts'
import { findSink, loadSinkTable, origin, SINK_REF, switchedOff } from '../../routes/sinks.ts'
import { docsHint } from '../../sink-rules.ts'
import { sinkView } from '../../sink-view.ts'
import { columnShapes, exampleRow } from '../row-shape.ts'
import { tool } from '../tool.ts'

export const describeSink = tool({
  name: 'describe_sink',
  description:
    'Everything to send rows to a sink: its table’s columns (type, required, doc, the JSON each takes), the roll policy, the key, what a valid row is and a ready example for send_rows.',
  input: v.object({ sink: SINK_REF }),
  level: 'read',
  run: async (c, { sink }) => {
    const row = await findSink(c, sink)
    const view = { ...sinkView(row, origin(c)), ...switchedOff(c) }
    const w = await warehouseByName(await c.var.db(), c.var.principal.projectId, row.warehouse)
    const table = await loadSinkTable(c, w, view.table)
    const meta = table.metadata
    // The roller stamps the arrival time itself: a producer never sends it.
    const fields = currentSchema(meta).fields.filter((f) => f.name !== INGEST_TS)
    const stamped = currentSchema(meta).fields.some((f) => f.name === INGEST_TS)
    const example = exampleRow(fields)
    const hint = docsHint(meta, `${w.name}.${view.table}`)
    // Lossless: a mapping's constants keep their digits.
    return stringifyLossless({
      sink: view,
      table: {
        name: `${w.name}.${view.table}`,
        doc: meta.properties.comment ?? null,
        format_version: meta['format-version'],
        partition_spec: defaultSpec(meta).fields.map((f) => ({ name: f.name, transform: f.transform })),
        columns: columnShapes(fields),
      },
      roll: view.roll,
      key: view.key,
      valid_row: [
        'a JSON object whose members are the table’s columns (by name); no other members (unknown_field)',
        'every required column present and not null (missing_required); optional ones may be left out or null',
        'each value as its column’s `json` says; a row that does not fit is rejected whole, with its reason (get_rejects), never stored half',
        ...(stamped ? [`${INGEST_TS} is stamped by the roll with the arrival time: leave it out`] : []),
        view.key ? `keyed on ${view.key.join(', ')}: a row replaces the table’s row with the same key` : 'appended: every row is a new row',
        'rows are appended at the next roll (roll.roll_seconds, or sooner at roll.roll_bytes), not at once',
      ],
      example: { sink: view.id, rows: [example] },
      ...(hint ? { docs_hint: hint } : {}),
    })
  },
})
