// Who calls /mcp: an API key (its project and level, as on the routes), or a send key, which is no
// principal: it names one sink and sends to it only (send_rows). Anything else is 401 before any
// MCP message is read.
import type { Context } from 'hono'
import { bearer, keyPrincipal } from '../auth.ts'
import type { AppEnv, Principal } from '../env.ts'
import { ApiError } from '../errors.ts'
import { SEND_KEY, sha256Hex } from '../keys.ts'

export type Caller = { kind: 'api'; principal: Principal } | { kind: 'send'; sink: { id: string; name: string }; sendKeySha256: string }

const unauthorized = () =>
  new ApiError(
    401,
    'unauthorized',
    'send an API key (al_key_…) or a sink’s send key (al_send_…) as Authorization: Bearer',
    {},
    { 'WWW-Authenticate': 'Bearer' },
  )

// A send key's sink: the live sink whose current key it is, or whose previous key in its overlap.
// Each arm is an equality on its own partial index (sinks_send_key, sinks_previous_send_key), so
// the lookup costs the same with ten sinks or a million.
export const SEND_KEY_SINK = `select id, name from sinks where send_key_sha256 = $1 and state <> 'deleted'
  union all
  select id, name from sinks where previous_send_key_sha256 = $1 and previous_send_key_retires_at > now() and state <> 'deleted'
  limit 1`

export async function mcpCaller(c: Context<AppEnv>): Promise<Caller> {
  const token = bearer(c.req.header('authorization'))
  if (!token) throw unauthorized()
  if (SEND_KEY.test(token)) {
    const sendKeySha256 = await sha256Hex(token)
    const { rows } = await (await c.var.db()).$client.query(SEND_KEY_SINK, [sendKeySha256])
    if (!rows[0]) throw unauthorized()
    return { kind: 'send', sink: { id: rows[0].id, name: rows[0].name }, sendKeySha256 }
  }
  const principal = await keyPrincipal(c, token)
  if (!principal) throw unauthorized()
  // The routes' helpers read the caller's project from here.
  c.set('principal', principal)
  return { kind: 'api', principal }
}
