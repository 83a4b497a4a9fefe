// What the integration setup hands the tests, and small helpers to call the API as a client would.
import { expect, inject } from 'vitest'
import type { StackPorts } from '../../dev/ports.ts'
import type { S3Config } from '../../iceberg/io/s3.ts'

export interface StackInfo {
  dir: string
  /** The edge the tests call: workerd (wrangler dev), or Node in a file that chose it (onEdgeHost). */
  apiUrl: string
  /** The same app served by Node (edge/node-main.ts), on the same Postgres and store. */
  nodeApiUrl: string
  databaseUrl: string
  bootstrapSecret: string
  /** The edge's LHBOX_SECRETS_KEY. */
  secretsKey: string
  /** The Worker's bindings (dev/stack.ts): another edge starts from them (test/support/edge.ts). */
  edgeVars: Record<string, string>
  adminKey: string
  warehouse: string
  s3: S3Config
  /** versitygw: a real S3 gateway (signatures verified, conditional writes honoured). */
  gateway: S3Config
  ports: StackPorts
}

declare module 'vitest' {
  export interface ProvidedContext {
    stack: StackInfo
  }
}

/** Where the edge runs: workerd (wrangler dev, as on Cloudflare) or Node (edge/node.ts, self-hosted). */
export type EdgeHost = 'workerd' | 'node'

let host: EdgeHost = 'workerd'

/**
 * Every helper of this file and every stack().apiUrl after this call reach the edge on `host`. A file
 * under test/integration/on-node/ calls it, then imports the test file it runs again on Node.
 */
export function onEdgeHost(h: EdgeHost): void {
  host = h
}

/** The host onEdgeHost chose (workerd unless a file chose Node). */
export const edgeHost = (): EdgeHost => host

export const stack = (): StackInfo => {
  const info = inject('stack')
  return host === 'node' ? { ...info, apiUrl: info.nodeApiUrl } : info
}

export interface Answer {
  status: number
  headers: Headers
  body: any
  text: string
}

export async function call(
  path: string,
  init: { method?: string; key?: string; json?: unknown; body?: BodyInit; headers?: Record<string, string>; base?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...init.headers }
  if (init.key) headers.authorization = `Bearer ${init.key}`
  if (init.json !== undefined) headers['content-type'] ??= 'application/json'
  const res = await fetch((init.base ?? stack().apiUrl) + path, {
    method: init.method ?? (init.json !== undefined || init.body !== undefined ? 'POST' : 'GET'),
    headers,
    body: init.json !== undefined ? JSON.stringify(init.json) : init.body,
  })
  const text = await res.text()
  let body: any = null
  try {
    body = text ? JSON.parse(text) : null
  } catch {
    body = null
  }
  return { status: res.status, headers: res.headers, body, text }
}

/** A new API key of a level in a project (created on first use), through POST /internal/keys. */
export async function newApiKey(level: 'read' | 'write' | 'admin', project = 'default'): Promise<string> {
  const res = await call('/internal/keys', { key: stack().bootstrapSecret, json: { project, level } })
  if (res.status !== 201) throw new Error(`POST /internal/keys: ${res.status} ${res.text}`)
  return res.body.key
}

/** The error envelope: the status, the code, a sentence, and never a stack trace. */
export function expectError(answer: Answer, status: number, code: string): void {
  expect({ status: answer.status, code: answer.body?.error?.code }).toEqual({ status, code })
  expect(typeof answer.body.error.message).toBe('string')
  expect(answer.body.error.message.length).toBeGreaterThan(0)
  expect(answer.text).not.toMatch(/\n\s+at\s|\.ts:\d+/)
}

/** The secret part of a key (al_key_… or al_send_…); it may itself hold `_`. */
export function secretOf(key: string): string {
  const m = /^al_(?:key|send)_[0-9a-f]{12}_([A-Za-z0-9_-]{43})$/.exec(key)
  if (!m) throw new Error(`not a key: ${key}`)
  return m[1]
}
