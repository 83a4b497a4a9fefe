// The S3 transport of Node processes (the roller, its scan threads, the Node edge): SigV4 by the AWS
// SDK's signer over node:crypto, sent with undici's request() on a keep-alive pool. Measured against
// the default (aws4fetch over WebCrypto and WHATWG fetch): a quarter of the CPU a request, the
// difference being WebCrypto's async jobs (4 per request) and fetch's streams (README, bench:sinks).
// Node-only: installed with useS3Transport by Node entry points, never imported by the Worker.
import { createHash } from 'node:crypto'
import { Hash } from '@smithy/hash-node'
import { SignatureV4 } from '@smithy/signature-v4'
import { Agent, type Dispatcher, request } from 'undici'
import { EMPTY_SHA256, type S3Answer, type S3Identity, type S3Transport } from './s3-transport.ts'

/** One pool per process: connections stay open between requests to each origin. */
let agent: Dispatcher | undefined

/** An entry point's own agent for every S3Client made after this call (one that checks where it connects). */
export function useS3Agent(dispatcher: Dispatcher): void {
  agent = dispatcher
}

export function nodeTransport(config: S3Identity): S3Transport {
  agent ??= new Agent({ keepAliveTimeout: 10_000, connections: 64 })
  const pool = agent
  const signer = new SignatureV4({
    credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey, sessionToken: config.sessionToken },
    region: config.region,
    service: 's3',
    sha256: Hash.bind(null, 'sha256'),
    // S3 signs the path as sent, encoded once (S3Client.url encodes it already).
    uriEscapePath: false,
    applyChecksum: false,
  })
  return async ({ method, url, headers, body }) => {
    const u = new URL(url)
    const query: Record<string, string> = {}
    for (const [k, v] of u.searchParams) query[k] = v
    const payloadHash = body === undefined ? EMPTY_SHA256 : createHash('sha256').update(body).digest('hex')
    const signed = await signer.sign({
      method,
      protocol: u.protocol,
      hostname: u.hostname,
      port: u.port ? Number(u.port) : undefined,
      path: u.pathname,
      query,
      headers: { ...headers, host: u.host, 'x-amz-content-sha256': payloadHash },
    })
    const { host: _host, ...sent } = signed.headers
    const res = await request(url, { method: method as 'GET', headers: sent, body, dispatcher: pool })
    return {
      status: res.statusCode,
      header: (name) => headerValue(res.headers[name.toLowerCase()]),
      headers: () => Object.entries(res.headers).map(([k, v]): [string, string] => [k, headerValue(v) ?? '']),
      bytes: async () => new Uint8Array(await res.body.arrayBuffer()),
      text: () => res.body.text(),
      discard: async () => {
        await res.body.dump({ limit: Number.POSITIVE_INFINITY }).catch(() => undefined)
      },
    } satisfies S3Answer
  }
}

function headerValue(v: string | string[] | undefined): string | null {
  if (v === undefined) return null
  return Array.isArray(v) ? v.join(', ') : v
}
