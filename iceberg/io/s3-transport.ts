// How an S3 request is signed and sent. S3Client builds the request and reads the answer; a transport
// signs it (SigV4, a signed payload hash) and carries it. The default is runtime-neutral (aws4fetch,
// WebCrypto, fetch: the Worker's); a Node process may install a cheaper one (s3-node.ts) with
// useS3Transport — the Worker bundle must not hold Node's HTTP client, so it is installed, not imported.
import { AwsClient } from 'aws4fetch'

interface S3Request {
  method: string
  /** Path-style, path and query already RFC 3986-encoded (S3Client.url): what is signed is what is sent. */
  url: string
  headers: Record<string, string>
  body?: Uint8Array | string
}

/** The part of an answer S3Client reads. Read a body once: bytes(), text() or discard(). */
export interface S3Answer {
  status: number
  header(name: string): string | null
  /** Every header, names lower-case. */
  headers(): Iterable<[string, string]>
  bytes(): Promise<Uint8Array>
  text(): Promise<string>
  /** Reads the body to its end and drops it: a cancelled body makes the connection go. */
  discard(): Promise<void>
}

/** Signs and sends one request; rejects only when no answer came (network). */
export type S3Transport = (request: S3Request) => Promise<S3Answer>

/** Who signs, and where: the part of an S3Config a transport reads. */
export interface S3Identity {
  region: string
  accessKeyId: string
  secretAccessKey: string
  sessionToken?: string
}

export type S3TransportFactory = (identity: S3Identity) => S3Transport

let factory: S3TransportFactory = fetchTransport

/** Every S3Client made after this call sends through `f` (a Node entry point installs s3-node.ts's). */
export function useS3Transport(f: S3TransportFactory): void {
  factory = f
}

export function transportFor(identity: S3Identity): S3Transport {
  return factory(identity)
}

export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'

/** aws4fetch's signer and the runtime's fetch: what the Worker sends with. */
export function fetchTransport(config: S3Identity): S3Transport {
  const aws = new AwsClient({
    accessKeyId: config.accessKeyId,
    secretAccessKey: config.secretAccessKey,
    sessionToken: config.sessionToken,
    service: 's3',
    region: config.region,
    retries: 0, // S3Client retries, whatever the transport
  })
  return async ({ method, url, headers, body }) => {
    // Signed payload: some stores refuse UNSIGNED-PAYLOAD under a bucket-policy grant (spec, "Measured").
    const signed = { ...headers, 'x-amz-content-sha256': body === undefined ? EMPTY_SHA256 : await sha256Hex(body) }
    const res = await aws.fetch(url, { method, headers: signed, body })
    return answerOf(res)
  }
}

function answerOf(res: Response): S3Answer {
  return {
    status: res.status,
    header: (name) => res.headers.get(name),
    headers: () => res.headers.entries(),
    bytes: async () => new Uint8Array(await res.arrayBuffer()),
    text: () => res.text(),
    discard: async () => {
      await res.arrayBuffer().catch(() => undefined)
    },
  }
}

async function sha256Hex(body: Uint8Array | string): Promise<string> {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body
  const digest = await crypto.subtle.digest('SHA-256', bytes)
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('')
}
