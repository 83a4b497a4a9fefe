// The switch for the whole feature (contract/switch.ts): while sinks are off the send and device
// routes answer 503 sinks_disabled with Retry-After. Nothing waiting is touched; the roller leases
// nothing, and everything resumes when the switch is set back.
import type { MiddlewareHandler } from 'hono'
import { sinksEnabled } from '../contract/switch.ts'
import type { AppEnv } from './env.ts'
import { ApiError } from './errors.ts'

export const SINKS_OFF =
  'sinks are switched off on this service: nothing is accepted or rolled now; batches already accepted are kept and roll once they are back on'

/** 503 sinks_disabled while sinks are off (the MCP tool send_rows asks it too). */
export function assertSinksOn(env: AppEnv['Bindings']): void {
  if (!sinksEnabled(env)) throw new ApiError(503, 'sinks_disabled', `${SINKS_OFF}; retry later`, {}, { 'Retry-After': '60' })
}

export const requireSinksOn: MiddlewareHandler<AppEnv> = async (c, next) => {
  assertSinksOn(c.env)
  await next()
}
