// send_rows: the send route's path (edge/send-batch.ts), from a tool call. A send key sends to its own
// sink; a write-level API key to any send sink of its project. Rows come as a JSON array (its numbers
// read losslessly: edge/mcp/message.ts) or as JSON text (an array or NDJSON), stored byte for byte.
import * as v from 'valibot'
import { stringify } from 'lossless-json'
import { BATCH_ID } from '../../../contract/bucket.ts'
import { ApiError } from '../../errors.ts'
import type { Framing } from '../../intake.ts'
import { SINK_REF } from '../../routes/sinks.ts'
import { SINK_BY_REF } from '../../sink-view.ts'
import { sendBatch } from '../../send-batch.ts'
import { assertSinksOn } from '../../sinks-switch.ts'
import { sha256HexBytes } from '../../store-batch.ts'
import type { Caller } from '../caller.ts'
import { tool } from '../tool.ts'
import type { Context } from 'hono'
import type { AppEnv } from '../../env.ts'

const SendRows = v.object({
  sink: SINK_REF,
  rows: v.pipe(
    v.union([v.array(v.unknown()), v.string()]),
    v.description('the rows: a JSON array of objects, or JSON text (an array, or one object a line) sent byte for byte'),
  ),
  batch_id: v.optional(
    v.pipe(
      v.string(),
      v.regex(BATCH_ID, 'batch_id: 1–128 of A-Z a-z 0-9 . _ : -'),
      v.description('the Idempotency-Key: the same batch_id and rows are stored once; left out, it is derived from the rows'),
    ),
  ),
})

/** The sink to send to and the key hash its ledger statement checks. */
async function target(c: Context<AppEnv>, sink: string, caller: Caller): Promise<{ sinkId: string; sendKeySha256: string }> {
  if (caller.kind === 'send') {
    if (sink !== caller.sink.id && sink !== caller.sink.name)
      throw new ApiError(403, 'forbidden', `this send key sends to sink ${caller.sink.id} only; use an API key of the project for others`)
    return { sinkId: caller.sink.id, sendKeySha256: caller.sendKeySha256 }
  }
  // The sink as GET /v1/sinks/{sink} finds it, without the view's lag and usage: this is the hot path.
  const { rows } = await (await c.var.db()).$client.query(`select s.id, s.name, s.state, s.feed, s.send_key_sha256 from (${SINK_BY_REF}) s`, [
    c.var.principal.projectId,
    sink,
  ])
  const row = rows[0]
  if (!row) throw new ApiError(404, 'sink_not_found', `no sink ${sink} in this project`)
  if (row.state === 'deleted') throw new ApiError(404, 'sink_not_found', `sink ${row.id} is deleted`)
  if (row.feed) throw new ApiError(409, 'not_a_send_sink', `sink ${row.name} is a ${row.feed.kind} sink: the roller fills it; it takes no rows`)
  // The write-level key stands for the sink's own key: the same ledger statement checks it.
  return { sinkId: row.id, sendKeySha256: row.send_key_sha256 }
}

/** The body as the send route would get it: text unchanged (its framing by its first character), an array as lossless JSON. */
function bodyOf(rows: string | unknown[]): { body: Uint8Array; framing: Framing } {
  if (typeof rows !== 'string') return { body: new TextEncoder().encode(stringify(rows) ?? '[]'), framing: 'array' }
  return { body: new TextEncoder().encode(rows), framing: rows.trimStart().startsWith('[') ? 'array' : 'lines' }
}

export const sendRows = tool({
  name: 'send_rows',
  description:
    'Send rows to a sink, as POST /v1/sinks/{sink} does: stored at once, appended to the table at the next roll. Answers accepted, rejected (elements that are not objects), batch_id and received_at; duplicate: true when this batch_id was already stored.',
  input: SendRows,
  level: 'write',
  sendKey: true,
  run: async (c, input, caller) => {
    assertSinksOn(c.env)
    const { sinkId, sendKeySha256 } = await target(c, input.sink, caller)
    const { body, framing } = bodyOf(input.rows)
    // No batch_id: the rows' digest is, so a retried call is stored once.
    const batchId = input.batch_id ?? `mcp-${(await sha256HexBytes(body)).slice(0, 40)}`
    const sent = await sendBatch(c, { sinkId, batchId, body, framing, sendKeySha256 })
    return JSON.stringify(sent.answer)
  },
})
