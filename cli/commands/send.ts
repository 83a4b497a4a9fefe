// lhbox sink send [<sink>] <file|-> (--send-key-file F | --send-key K | LHBOX_SEND_KEY) [--batch-id ID]
//
// The batch goes to the send route exactly as read (the file's or stdin's bytes, never re-serialized),
// with the send key only — never the API key (the send route answers 403 send_only to an API key).
// Where it goes:
//   - with --send-key-file: the file's ingest_url (or <url>/v1/sinks/<sink_id>); a <sink> given too must
//     be that file's sink id or name;
//   - a sink id (snk_…): <LHBOX_URL>/v1/sinks/<id>;
//   - a sink name: resolved with GET /v1/sinks/{name}, which needs an API key (LHBOX_API_KEY or
//     --api-key); a send key alone cannot name a sink, so without an API key give the id.
// The batch id (Idempotency-Key) is --batch-id or a generated one, printed to stderr before sending so
// that a retry after a timeout or a 503 can reuse it and be answered as a duplicate instead of stored twice.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { api, CliError, type Connection } from '../http.ts'
import { json } from '../output.ts'

type Flags = Record<string, string | boolean | string[] | undefined>

const BATCH_ID = /^[A-Za-z0-9._:-]{1,128}$/
const SINK_ID = /^snk_[0-9a-f]+$/
const SEND_KEY = /^al_send_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/

export const SEND_USAGE = 'lhbox sink send [<sink>] <file.json|-> (--send-key-file FILE | --send-key KEY | LHBOX_SEND_KEY) [--batch-id ID]'

/** What `sink create --save` writes and `sink send --send-key-file` reads. */
export interface KeyFile {
  sink_id: string
  name: string
  send_key: string
  ingest_url: string
}

interface SendAnswer {
  accepted: number
  rejected: number
  reasons: Array<{ index: number; reason: string }>
  batch_id: string
  bytes: number
  received_at: string
  state: string
  duplicate?: boolean
}

function readKeyFile(path: string): KeyFile {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw new CliError('usage', `cannot read --send-key-file ${path}: ${(err as Error).message}`)
  }
  let parsed: Partial<KeyFile>
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new CliError('usage', `--send-key-file ${path} is not JSON; it is the file lhbox sink create --save wrote`)
  }
  if (typeof parsed?.send_key !== 'string' || (typeof parsed.sink_id !== 'string' && typeof parsed.ingest_url !== 'string')) {
    throw new CliError('usage', `--send-key-file ${path} holds no send_key and sink_id/ingest_url; it is the file lhbox sink create --save wrote`)
  }
  return parsed as KeyFile
}

/**
 * The send key from --send-key-file FILE, --send-key KEY or LHBOX_SEND_KEY (at most one of the flags),
 * checked for its shape; also used by `lhbox sink device-url`. `usage` is the command's usage line.
 */
export function loadSendKey(flags: Flags, usage: string, env: NodeJS.ProcessEnv = process.env): { key: string; keyFile?: KeyFile } {
  const keySources = [flags['send-key-file'], flags['send-key']].filter((x) => x !== undefined)
  if (keySources.length > 1) throw new CliError('usage', 'give one of --send-key-file and --send-key')
  const keyFile = flags['send-key-file'] !== undefined ? readKeyFile(String(flags['send-key-file'])) : undefined
  const key = keyFile?.send_key ?? (flags['send-key'] as string | undefined) ?? env.LHBOX_SEND_KEY
  if (!key) throw new CliError('usage', `no send key: give --send-key-file FILE, --send-key KEY or set LHBOX_SEND_KEY\n${usage}`)
  if (!SEND_KEY.test(key)) throw new CliError('usage', 'that is not a send key (al_send_…); an API key cannot send to a sink')
  return { key, keyFile }
}

/** A batch id for a send without --batch-id: the time, and randomness so two producers never collide. */
function newBatchId(now = new Date()): string {
  return `${now.toISOString().replace(/\.\d{3}Z$/, 'Z')}-${randomBytes(6).toString('hex')}`
}

async function readInput(source: string): Promise<Buffer> {
  if (source === '-') {
    const chunks: Buffer[] = []
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
    return Buffer.concat(chunks)
  }
  try {
    return readFileSync(source)
  } catch (err) {
    throw new CliError('usage', `cannot read ${source}: ${(err as Error).message}`)
  }
}

async function target(conn: () => Connection, sink: string | undefined, keyFile: KeyFile | undefined): Promise<string> {
  if (keyFile) {
    if (sink && sink !== keyFile.sink_id && sink !== keyFile.name) {
      throw new CliError('usage', `the --send-key-file is for sink ${keyFile.name} (${keyFile.sink_id}), not ${sink}`)
    }
    if (keyFile.ingest_url) return keyFile.ingest_url
    return `${conn().url}/v1/sinks/${keyFile.sink_id}`
  }
  if (!sink) throw new CliError('usage', `name the sink (its id, snk_…) or give --send-key-file\n${SEND_USAGE}`)
  const c = conn()
  if (SINK_ID.test(sink)) return `${c.url}/v1/sinks/${sink}`
  if (!c.apiKey) {
    throw new CliError(
      'usage',
      `a sink name (${sink}) can only be resolved with an API key (LHBOX_API_KEY); give the sink id (snk_…) or --send-key-file instead`,
    )
  }
  const found = await api<{ id: string; ingest_url: string }>(c, 'GET', `/v1/sinks/${encodeURIComponent(sink)}`)
  return found.ingest_url ?? `${c.url}/v1/sinks/${found.id}`
}

function show(a: SendAnswer): string {
  const lines = [
    a.duplicate
      ? `duplicate: batch ${a.batch_id} was already received at ${a.received_at}; nothing stored again`
      : `sent batch ${a.batch_id}: ${a.accepted} accepted, ${a.rejected} rejected (${a.bytes} bytes stored, ${a.state})`,
  ]
  if (a.duplicate) lines.push(`its answer then: ${a.accepted} accepted, ${a.rejected} rejected (${a.bytes} bytes)`)
  for (const r of a.reasons ?? []) lines.push(`  element ${r.index}: ${r.reason}`)
  return lines.join('\n')
}

export async function sendBatch(conn: () => Connection, args: string[], flags: Flags, err: (s: string) => void): Promise<string> {
  if (args.length < 1 || args.length > 2) throw new CliError('usage', SEND_USAGE)
  const [sink, source] = args.length === 2 ? args : [undefined, args[0]]
  const { key, keyFile } = loadSendKey(flags, SEND_USAGE)
  const batchId = flags['batch-id'] !== undefined ? String(flags['batch-id']) : newBatchId()
  if (!BATCH_ID.test(batchId)) throw new CliError('usage', '--batch-id: 1–128 characters of A-Z a-z 0-9 . _ : -')

  const url = await target(conn, sink, keyFile)
  const body = await readInput(source)
  if (body.length === 0) throw new CliError('usage', `${source === '-' ? 'stdin' : source} is empty; send a JSON array of objects`)

  const retry = `retry with --batch-id ${batchId}`
  // Printed before sending: if the answer never comes, the same id makes the retry safe.
  if (flags['batch-id'] === undefined) err(`batch id ${batchId} (${retry} to resend it safely)`)
  let res: Response
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': batchId, 'content-type': 'application/json' },
      body,
    })
  } catch (e) {
    throw new CliError('unreachable', `cannot reach ${url}: ${(e as Error).message}; ${retry}`)
  }
  const text = await res.text()
  let parsed: any
  try {
    parsed = text ? JSON.parse(text) : null
  } catch {
    throw new CliError('bad_response', `POST ${url} answered ${res.status} with a body that is not JSON; ${retry}`, res.status)
  }
  if (!res.ok) {
    const error = parsed?.error ?? {}
    const again =
      res.status >= 500 || res.status === 429 ? `; ${retry}${res.headers.get('retry-after') ? ` after ${res.headers.get('retry-after')} s` : ''}` : ''
    throw new CliError(error.code ?? `http_${res.status}`, `${error.message ?? res.statusText}${again}`, res.status)
  }
  return flags.json ? json(parsed) : show(parsed as SendAnswer)
}
