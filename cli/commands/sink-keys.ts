// lhbox sink rotate-key <sink> (--save FILE | --show-key) [--retire-previous-after SECONDS]
// lhbox sink retire-previous-key <sink>
//
// A new send key is a secret answered once, as at create: --save writes the key file `sink send
// --send-key-file` reads (a new file, mode 0600, never overwriting one: it may hold another sink's
// only key), --show-key prints it; without either nothing is rotated. The previous key keeps working
// until the answer's previous_retires_at (a day unless --retire-previous-after says; 0: at once).
import { closeSync, fchmodSync, openSync, unlinkSync, writeSync } from 'node:fs'
import { api, CliError, type Connection } from '../http.ts'
import { json } from '../output.ts'
import type { KeyFile } from './send.ts'

type Flags = Record<string, string | boolean | string[] | undefined>

export const KEY_FLAGS = { 'retire-previous-after': { type: 'string' } } as const

export const KEY_USAGE = {
  rotate: 'lhbox sink rotate-key <sink> (--save FILE | --show-key) [--retire-previous-after SECONDS]',
  retire: 'lhbox sink retire-previous-key <sink>',
}

/** Creates FILE for a send key before the API is called: exclusively (never overwriting), mode 0600. */
export function openKeyFile(path: string): number {
  try {
    const fd = openSync(path, 'wx', 0o600)
    fchmodSync(fd, 0o600) // whatever the umask did
    return fd
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EEXIST') {
      throw new CliError('file_exists', `${path} exists; --save never overwrites a file (it may hold another sink's key). Choose a new path or remove it first`)
    }
    throw new CliError('usage', `cannot create --save ${path}: ${(err as Error).message}`)
  }
}

/** --save FILE or --show-key, exactly one: a key answered once must land somewhere. */
export function keyDestination(flags: Flags, usage: string, what: string): string | undefined {
  const save = flags.save as string | undefined
  if (save === undefined && !flags['show-key']) {
    throw new CliError('usage', `${what} answers the sink's send key once: give --save FILE (written with mode 0600) or --show-key (printed once)\n${usage}`)
  }
  if (save !== undefined && flags['show-key']) throw new CliError('usage', 'give one of --save FILE and --show-key')
  if (save === '') throw new CliError('usage', '--save needs a file path')
  return save
}

interface Rotated extends KeyFile {
  previous_retires_at: string
}

const sinkPath = (ref: string) => `/v1/sinks/${encodeURIComponent(ref)}`

export async function rotateKey(conn: Connection, args: string[], flags: Flags, err: (s: string) => void): Promise<string> {
  const [ref] = args
  if (!ref || args.length > 1) throw new CliError('usage', KEY_USAGE.rotate)
  const after = flags['retire-previous-after']
  if (after !== undefined && !/^\d+$/.test(String(after))) throw new CliError('usage', `--retire-previous-after ${after}: give whole seconds (0 to 604800)`)
  const save = keyDestination(flags, KEY_USAGE.rotate, 'sink rotate-key')
  const fd = save !== undefined ? openKeyFile(save) : undefined
  let r: Rotated
  try {
    r = await api<Rotated>(conn, 'POST', `${sinkPath(ref)}/send-keys`, after === undefined ? {} : { retire_previous_after_seconds: Number(after) })
  } catch (e) {
    if (fd !== undefined) {
      closeSync(fd)
      unlinkSync(save as string)
    }
    throw e
  }
  const head = `rotated the send key of sink ${r.name} (${r.sink_id}); the previous key works until ${r.previous_retires_at}`
  if (fd === undefined) {
    if (flags.json) return json(r)
    return [head, `send key   ${r.send_key}`, '           (shown once: only its hash is kept)'].join('\n')
  }
  const file: KeyFile = { sink_id: r.sink_id, name: r.name, send_key: r.send_key, ingest_url: r.ingest_url }
  try {
    writeSync(fd, `${JSON.stringify(file, null, 2)}\n`)
    closeSync(fd)
  } catch (e) {
    // The new key exists nowhere else; the previous one still works until it retires.
    err(`error: the send key could not be written to ${save}: ${(e as Error).message}`)
    throw new CliError('save_failed', `the key was rotated but the new one is lost; rotate again (lhbox sink rotate-key ${r.name} --save FILE)`)
  }
  const { send_key: _secret, ...shown } = r
  if (flags.json) return json(shown)
  return [head, `send key   saved to ${save} (mode 0600); send with: lhbox sink send ${r.name} batch.json --send-key-file ${save}`].join('\n')
}

export async function retirePreviousKey(conn: Connection, args: string[], flags: Flags): Promise<string> {
  const [ref] = args
  if (!ref || args.length > 1) throw new CliError('usage', KEY_USAGE.retire)
  const r = await api<{ sink_id: string; previous_retired_at: string }>(conn, 'DELETE', `${sinkPath(ref)}/send-keys/previous`)
  if (flags.json) return json(r)
  return `retired the previous send key of sink ${ref} (${r.sink_id}) at ${r.previous_retired_at}; only the current key works`
}
