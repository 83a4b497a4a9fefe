// One error path: throw ApiError anywhere; app.onError turns it into the envelope
// {"error": {"code", "message", ...details}}.
import type { ContentfulStatusCode } from 'hono/utils/http-status'

export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

export function envelope(code: string, message: string, details: Record<string, unknown> = {}) {
  return { error: { code, message, ...details } }
}

export const unavailable = (what: 'database' | 'bucket', message: string) =>
  new ApiError(503, 'unavailable', message, { failed: [what] }, { 'Retry-After': '5' })
