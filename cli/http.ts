// The CLI's HTTP client: LHBOX_URL and LHBOX_API_KEY (flags --url, --api-key override).
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status?: number,
  ) {
    super(message)
  }
}

export interface Connection {
  url: string
  apiKey?: string
}

export function connection(flags: { url?: string; 'api-key'?: string }, env: NodeJS.ProcessEnv = process.env): Connection {
  const url = flags.url ?? env.LHBOX_URL
  if (!url) throw new CliError('no_url', 'set LHBOX_URL or pass --url (npm run dev writes it to .lhbox/dev.env)')
  return { url: url.replace(/\/+$/, ''), apiKey: flags['api-key'] ?? env.LHBOX_API_KEY }
}

export async function api<T = unknown>(conn: Connection, method: string, path: string, body?: unknown): Promise<T> {
  return JSON.parse(await apiText(conn, method, path, body)) as T
}

/** The answer's text, unparsed: for pages holding producers' rows, printed as sent (lossless numbers). */
export async function apiText(conn: Connection, method: string, path: string, body?: unknown): Promise<string> {
  const headers: Record<string, string> = {}
  if (conn.apiKey) headers.authorization = `Bearer ${conn.apiKey}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  let res: Response
  try {
    res = await fetch(conn.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  } catch (err) {
    throw new CliError('unreachable', `cannot reach ${conn.url}: ${(err as Error).message}`)
  }
  const text = await res.text()
  let parsed: any
  try {
    parsed = text ? JSON.parse(text) : null
  } catch {
    throw new CliError('bad_response', `${method} ${path} answered ${res.status} with a body that is not JSON`, res.status)
  }
  if (!res.ok) {
    const error = parsed?.error ?? {}
    throw new CliError(error.code ?? `http_${res.status}`, error.message ?? res.statusText, res.status)
  }
  return text || 'null'
}
