// JSON log lines, one per event, with the sink id and roll id where there is one.
export type Fields = Record<string, unknown>

export interface Logger {
  info(msg: string, fields?: Fields): void
  warn(msg: string, fields?: Fields): void
  error(msg: string, fields?: Fields): void
  child(fields: Fields): Logger
}

export function jsonLogger(base: Fields = {}, write: (line: string) => void = (l) => process.stdout.write(l + '\n')): Logger {
  const emit = (level: string, msg: string, fields?: Fields) =>
    write(JSON.stringify({ at: new Date().toISOString(), level, msg, ...base, ...fields }, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)))
  return {
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => jsonLogger({ ...base, ...fields }, write),
  }
}

/** An error's message with its causes ("fetch failed: connect ECONNREFUSED …"): undici hides the reason in `cause`. */
export function errorText(err: unknown): string {
  const parts: string[] = []
  for (let e: unknown = err; e !== undefined && e !== null && parts.length < 5; e = (e as { cause?: unknown }).cause) {
    const text = e instanceof Error ? e.message : String(e)
    if (text && !parts.some((p) => p.includes(text))) parts.push(text) // wrappers often repeat their cause's message
    if (!(e instanceof Error)) break
  }
  return parts.join(': ')
}
