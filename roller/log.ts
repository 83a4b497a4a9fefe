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
