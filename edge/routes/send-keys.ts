// Send-key rotation (issue 30, part 4): POST /v1/sinks/{id}/send-keys answers a new send key once and
// keeps the one it replaces working until previous_retires_at, so a fleet can move over;
// DELETE /v1/sinks/{id}/send-keys/previous retires that one at once. Two keys live at most: a rotation
// during an overlap retires the older previous key on the spot. Only SHA-256s are kept, as at create.
import * as v from 'valibot'
import { Hono, type Context } from 'hono'
import { audit } from '../audit.ts'
import { requireKey } from '../auth.ts'
import type { AppEnv } from '../env.ts'
import { ApiError } from '../errors.ts'
import { newKey, sha256Hex } from '../keys.ts'
import { iso } from '../ledger-sql.ts'
import { findSink, origin } from './sinks.ts'
import type { SinkRow } from '../sink-view.ts'
import { jsonBody } from '../validate.ts'

/** The overlap's default and its most: a day, a week. */
export const RETIRE_DEFAULT_SECONDS = 86_400
export const RETIRE_MAX_SECONDS = 604_800

export const RotateSendKey = v.strictObject({
  retire_previous_after_seconds: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(0, 'retire_previous_after_seconds: 0 (at once) to 604800 (a week)'),
      v.maxValue(RETIRE_MAX_SECONDS, 'retire_previous_after_seconds: 0 (at once) to 604800 (a week)'),
    ),
    RETIRE_DEFAULT_SECONDS,
  ),
})

/** A live send sink of the caller's project: a feed has no producer and so no send key. */
async function sendSink(c: Context<AppEnv>): Promise<SinkRow> {
  const row = await findSink(c, c.req.param('sink') ?? '')
  if (row.state === 'deleted') throw new ApiError(404, 'sink_not_found', `sink ${row.id} is deleted`)
  if (row.feed) throw new ApiError(409, 'no_send_key', `sink ${row.name} is a ${row.feed.kind} sink: it has no producer and no send key`)
  return row
}

// One statement: the current key becomes the previous (unless retired at once), the new one current.
// The row is locked first so the answer says truly whether a previous key was still live (then it
// is retired by this rotation: two keys at most).
const ROTATE = `
with old as (
  select id, previous_send_key_sha256 is not null and previous_send_key_retires_at > now() as had_previous
  from sinks where id = $1 and state <> 'deleted' for update
)
update sinks s set
  send_key_sha256 = $2,
  previous_send_key_sha256 = case when $3::int > 0 then s.send_key_sha256 end,
  previous_send_key_retires_at = case when $3::int > 0 then now() + make_interval(secs => $3::int) end
from old where s.id = old.id
returning old.had_previous, ${iso('now()')} as now, ${iso('s.previous_send_key_retires_at')} as retires_at`

const RETIRE = `
update sinks set previous_send_key_sha256 = null, previous_send_key_retires_at = null
where id = $1 and state <> 'deleted' and previous_send_key_sha256 is not null and previous_send_key_retires_at > now()
returning ${iso('now()')} as now`

export const sendKeyRoutes = new Hono<AppEnv>()
  .post('/v1/sinks/:sink/send-keys', requireKey('write'), async (c) => {
    // No body at all takes the defaults (the console's button sends none); a body is checked like any other.
    const body = (await c.req.text()) === '' ? v.parse(RotateSendKey, {}) : await jsonBody(c, RotateSendKey)
    const row = await sendSink(c)
    const seconds = body.retire_previous_after_seconds
    const { key } = newKey('send')
    const db = await c.var.db()
    const { rows } = await db.$client.query(ROTATE, [row.id, await sha256Hex(key), seconds])
    // Deleted between the lookup and the update.
    if (!rows[0]) throw new ApiError(404, 'sink_not_found', `sink ${row.id} is deleted`)
    const r = rows[0] as { had_previous: boolean; now: string; retires_at: string | null }
    const base = { projectId: row.project_id, actor: c.var.principal.keyId, subject: row.id }
    await audit(db, { ...base, action: 'sink.key_rotate', details: { retire_previous_after_seconds: seconds, previous_retires_at: r.retires_at ?? r.now } })
    // The key replaced now, when asked; and an older previous key a second rotation pushed out.
    if (seconds === 0)
      await audit(db, { ...base, action: 'sink.key_retire', details: { key: 'replaced', reason: 'rotated with retire_previous_after_seconds 0' } })
    if (r.had_previous) await audit(db, { ...base, action: 'sink.key_retire', details: { key: 'older previous', reason: 'two send keys live at most' } })
    return c.json(
      {
        sink_id: row.id,
        name: row.name,
        ingest_url: `${origin(c)}/v1/sinks/${row.id}`,
        send_key: key,
        previous_retires_at: r.retires_at ?? r.now,
      },
      201,
    )
  })
  .delete('/v1/sinks/:sink/send-keys/previous', requireKey('write'), async (c) => {
    const row = await sendSink(c)
    const db = await c.var.db()
    const { rows } = await db.$client.query(RETIRE, [row.id])
    if (!rows[0]) throw new ApiError(409, 'no_previous_key', `sink ${row.name} has no previous send key still working`)
    await audit(db, {
      projectId: row.project_id,
      actor: c.var.principal.keyId,
      action: 'sink.key_retire',
      subject: row.id,
      details: { key: 'previous', reason: 'retired by DELETE' },
    })
    return c.json({ sink_id: row.id, previous_retired_at: rows[0].now }, 200)
  })
