// An Iceberg REST catalog client (the REST OpenAPI spec, open-api/rest-catalog-open-api.yaml in
// apache/iceberg) behind the Catalog interface: Cloudflare R2 Data Catalog, Polaris, Lakekeeper,
// Nessie, Gravitino, Glue/S3 Tables REST, Apache Iceberg's REST fixture. Runtime-neutral (fetch and
// WebCrypto only; runs in workerd).
//
// Every body that carries table metadata is parsed losslessly: snapshot ids are 63-bit and
// JSON.parse would round them. Requirements and updates are written with stringifyLossless so
// bigint ids go out as exact JSON integers.
import { S3FileIO, type FileIO } from '../io/file-io.ts'
import { parseLossless, stringifyLossless } from '../spec/json.ts'
import { assignFreshIds, parseMetadata } from '../spec/metadata.ts'
import { buildPartitionSpec } from '../spec/partition.ts'
import type { TableRequirement, TableUpdate } from '../spec/updates.ts'
import {
  CatalogError,
  CommitConflict,
  CatalogUnauthorized,
  CommitStateUnknown,
  NoSuchNamespace,
  NoSuchTable,
  TableAlreadyExists,
  type Catalog,
  type CommitOptions,
  type CreateTableRequest,
  type LoadedTable,
  type TableIdentifier,
} from './index.ts'
import { RestAuth, type FetchLike } from './rest-auth.ts'

export interface RestCatalogOptions {
  /** This catalog's name in lhbox (not sent to the server). */
  name: string
  /** Base URI: requests go to `<uri>/v1/...`. */
  uri: string
  /** Sent as `?warehouse=` to /v1/config (R2: `<account>_<bucket>`; Polaris: the catalog name). */
  warehouse?: string
  /** A bearer token. */
  token?: string
  /** `client_id:client_secret` for OAuth2 client credentials at `<uri>/v1/oauth/tokens` (or oauth2ServerUri). */
  credential?: string
  scope?: string
  oauth2ServerUri?: string
  /**
   * S3 access for table files. The endpoint and region are used as given (a catalog's vended
   * `s3.endpoint`/`client.region` only fill in what is missing); keys vended by `loadTable` win
   * over the ones here.
   */
  s3: {
    endpoint?: string
    region?: string
    accessKeyId?: string
    secretAccessKey?: string
    sessionToken?: string
    retries?: number
    observe?: () => () => void
  }
  fetch?: FetchLike
  /** Per-request timeout; 60 s when not given. A commit that times out is CommitStateUnknown. */
  timeoutMs?: number
  /** Extra headers on every catalog request. */
  headers?: Record<string, string>
}

type Obj = Record<string, unknown>

/** What a failed call was doing: decides how 404 and 409 are read. */
type Context = 'namespace' | 'table' | 'create' | 'commit' | 'other'

interface Answer {
  status: number
  text: string
}

/** Commit answers whose outcome is unknown (Java's commitErrorHandler). */
const UNKNOWN_STATUS = new Set([500, 502, 503, 504])

/** A namespace in a path: levels joined by the unit separator (%1F), each level escaped. */
const namespacePath = (namespace: string[]) => namespace.map(encodeURIComponent).join('%1F')

/** The server's error as `type: message` (never its stack), or the start of a non-JSON body. */
function serverError(text: string): { type?: string; message: string } {
  try {
    const body = JSON.parse(text) as { error?: { type?: unknown; message?: unknown } }
    const e = body?.error
    if (e && typeof e === 'object') {
      const type = typeof e.type === 'string' ? e.type : undefined
      const message = typeof e.message === 'string' ? e.message : ''
      return { type, message: type ? `${type}: ${message}` : message }
    }
  } catch {
    // not JSON
  }
  const t = text.trim().replace(/\s+/g, ' ')
  return { message: t.length > 200 ? `${t.slice(0, 200)}…` : t }
}

function fail(what: string, context: Context, a: Answer): never {
  const { type = '', message } = serverError(a.text)
  const text = `${what}: ${a.status}${message ? ` ${message}` : ''}`
  if (a.status === 404) {
    if (/NoSuchNamespace/i.test(type)) throw new NoSuchNamespace(text)
    if (/NoSuchTable|NoSuchView/i.test(type)) throw new NoSuchTable(text)
    if (context === 'table' || context === 'commit') throw new NoSuchTable(text)
    if (context === 'namespace' || context === 'create') throw new NoSuchNamespace(text)
  }
  if (a.status === 401 || a.status === 403) throw new CatalogUnauthorized(text)
  if (a.status === 409 && context === 'create') throw new TableAlreadyExists(text)
  if (a.status === 409 && context === 'commit') throw new CommitConflict(text)
  if (context === 'commit' && UNKNOWN_STATUS.has(a.status)) throw new CommitStateUnknown(text)
  throw new CatalogError(text)
}

/** A small answer without metadata (config, lists): plain JSON is fine there. */
function json<T>(what: string, text: string): T {
  try {
    return JSON.parse(text) as T
  } catch {
    throw new CatalogError(`${what}: the catalog answered with something that is not JSON`)
  }
}

const strings = (v: unknown): Record<string, string> => {
  const out: Record<string, string> = {}
  if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x
  return out
}

/** A FileIO for a table whose catalog vended no credentials and whose client has none. */
const noCredentials = (location: string): FileIO => {
  const refuse = async (): Promise<never> => {
    throw new CatalogError(`no S3 credentials for ${location}: the catalog vended none and none were configured`)
  }
  return { read: refuse, write: refuse, delete: refuse }
}

export class RestCatalog implements Catalog {
  readonly name: string
  private readonly base: string
  private readonly fetch: FetchLike
  private readonly timeoutMs: number
  private readonly auth: RestAuth
  private config: Promise<{ prefix: string; settings: Record<string, string> }> | undefined

  constructor(private readonly options: RestCatalogOptions) {
    this.name = options.name
    this.base = options.uri.replace(/\/+$/, '')
    // Never call an unbound global fetch through `this` (workerd: "Illegal invocation").
    this.fetch = options.fetch ?? ((input, init) => fetch(input, init))
    this.timeoutMs = options.timeoutMs ?? 60_000
    this.auth = new RestAuth(options, `${this.base}/v1/oauth/tokens`, this.fetch, this.timeoutMs)
  }

  // ---------- transport ----------

  /** One request with auth; a 401 (or 419) gets one fresh OAuth2 token and one retry. */
  private async send(method: string, url: string, body: string | undefined, context: Context, what: string): Promise<Answer> {
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { accept: 'application/json', 'x-iceberg-access-delegation': 'vended-credentials', ...this.options.headers }
      if (body !== undefined) headers['content-type'] = 'application/json'
      const authorization = await this.auth.header()
      if (authorization) headers.authorization = authorization
      let answer: Answer
      try {
        const res = await this.fetch(url, { method, headers, body, signal: AbortSignal.timeout(this.timeoutMs) })
        answer = { status: res.status, text: method === 'HEAD' ? '' : await res.text() }
      } catch (err) {
        const e = err as Error
        const reason = e.name === 'TimeoutError' || e.name === 'AbortError' ? `no answer within ${this.timeoutMs} ms` : e.message
        if (context === 'commit') throw new CommitStateUnknown(`${what}: ${reason}`)
        throw new CatalogError(`${what}: ${reason}`)
      }
      if ((answer.status === 401 || answer.status === 419) && attempt === 0 && this.auth.canRefresh) {
        await this.auth.refresh()
        continue
      }
      return answer
    }
  }

  /** Reads /v1/config once: the path prefix and the catalog's settings (overrides over defaults). */
  private settings(): Promise<{ prefix: string; settings: Record<string, string> }> {
    this.config ??= (async () => {
      const query = this.options.warehouse ? `?warehouse=${encodeURIComponent(this.options.warehouse)}` : ''
      const a = await this.send('GET', `${this.base}/v1/config${query}`, undefined, 'other', 'reading the catalog config')
      if (a.status !== 200) fail('reading the catalog config', 'other', a)
      const body = json<{ defaults?: unknown; overrides?: unknown }>('reading the catalog config', a.text)
      const settings = { ...strings(body.defaults), ...strings(body.overrides) }
      this.auth.useServerTokenUri(settings['oauth2-server-uri'])
      return { prefix: (settings.prefix ?? '').replace(/^\/+|\/+$/g, ''), settings }
    })().catch((err) => {
      this.config = undefined // a later call tries again
      throw err
    })
    return this.config
  }

  private async url(path: string, query?: Record<string, string | undefined>): Promise<string> {
    const { prefix } = await this.settings()
    const q = new URLSearchParams()
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) q.set(k, v)
    const qs = q.toString()
    return `${this.base}/v1/${prefix ? `${prefix}/` : ''}${path}${qs ? `?${qs}` : ''}`
  }

  private tablePath(id: TableIdentifier): string {
    return `namespaces/${namespacePath(id.namespace)}/tables/${encodeURIComponent(id.name)}`
  }

  /** A LoadTableResult / CommitTableResponse as a LoadedTable; `io` kept from the base on commits. */
  private loaded(id: TableIdentifier, text: string, io?: FileIO): LoadedTable {
    let body: Obj
    try {
      body = parseLossless(text) as Obj
    } catch {
      throw new CatalogError(`the catalog's answer for ${[...id.namespace, id.name].join('.')} is not JSON`)
    }
    const metadataLocation = body['metadata-location']
    if (typeof metadataLocation !== 'string' || !body.metadata || typeof body.metadata !== 'object') {
      throw new CatalogError(`the catalog's answer for ${[...id.namespace, id.name].join('.')} has no metadata-location or metadata`)
    }
    const metadata = parseMetadata(stringifyLossless(body.metadata))
    return { identifier: id, metadataLocation, metadata, io: io ?? this.fileIO(metadata.location, body) }
  }

  /** Table FileIO: vended credentials (`storage-credentials` by longest prefix, then `config`) over the client's own. */
  private fileIO(location: string, body: Obj): FileIO {
    let vended = strings(body.config)
    let best = -1
    for (const c of Array.isArray(body['storage-credentials']) ? (body['storage-credentials'] as Obj[]) : []) {
      const prefix = typeof c?.prefix === 'string' ? c.prefix : ''
      if (location.startsWith(prefix) && prefix.length > best) {
        best = prefix.length
        vended = { ...strings(body.config), ...strings(c.config) }
      }
    }
    const own = this.options.s3
    const useVended = vended['s3.access-key-id'] !== undefined && vended['s3.secret-access-key'] !== undefined
    const accessKeyId = useVended ? vended['s3.access-key-id'] : own.accessKeyId
    const secretAccessKey = useVended ? vended['s3.secret-access-key'] : own.secretAccessKey
    const sessionToken = useVended ? vended['s3.session-token'] : own.sessionToken
    const endpoint = own.endpoint ?? vended['s3.endpoint']
    const region = own.region ?? vended['client.region'] ?? vended['s3.region'] ?? 'us-east-1'
    if (!accessKeyId || !secretAccessKey || !endpoint) return noCredentials(location)
    return new S3FileIO({
      endpoint,
      region,
      accessKeyId,
      secretAccessKey,
      ...(sessionToken ? { sessionToken } : {}),
      retries: own.retries,
      observe: own.observe,
    })
  }

  // ---------- Catalog ----------

  async listNamespaces(): Promise<string[][]> {
    const out: string[][] = []
    const walk = async (parent: string[]) => {
      let pageToken: string | undefined
      do {
        const url = await this.url('namespaces', { parent: parent.length ? parent.join('\x1f') : undefined, pageToken })
        const a = await this.send('GET', url, undefined, 'namespace', 'listing namespaces')
        if (a.status !== 200) fail('listing namespaces', 'namespace', a)
        const body = json<{ namespaces?: string[][]; 'next-page-token'?: string | null }>('listing namespaces', a.text)
        // Only true children: a server that ignores `parent` must not send us round in circles.
        const children = (body.namespaces ?? []).filter((n) => n.length > parent.length && parent.every((p, i) => n[i] === p))
        for (const ns of children) {
          out.push(ns)
          await walk(ns)
        }
        pageToken = body['next-page-token'] ?? undefined
      } while (pageToken)
    }
    await walk([])
    return out
  }

  async ensureNamespace(namespace: string[]): Promise<void> {
    for (let level = 1; level <= namespace.length; level++) {
      const ns = namespace.slice(0, level)
      const what = `creating namespace ${ns.join('.')}`
      const head = await this.send('HEAD', await this.url(`namespaces/${namespacePath(ns)}`), undefined, 'namespace', what)
      if (head.status === 200 || head.status === 204) continue
      const a = await this.send('POST', await this.url('namespaces'), JSON.stringify({ namespace: ns, properties: {} }), 'namespace', what)
      if (a.status !== 200 && a.status !== 409) fail(what, 'other', a)
    }
  }

  async listTables(namespace: string[]): Promise<TableIdentifier[]> {
    const out: TableIdentifier[] = []
    const what = `listing tables in ${namespace.join('.')}`
    let pageToken: string | undefined
    do {
      const a = await this.send('GET', await this.url(`namespaces/${namespacePath(namespace)}/tables`, { pageToken }), undefined, 'namespace', what)
      if (a.status !== 200) fail(what, 'namespace', a)
      const body = json<{ identifiers?: TableIdentifier[]; 'next-page-token'?: string | null }>(what, a.text)
      for (const id of body.identifiers ?? []) out.push({ namespace: [...id.namespace], name: id.name })
      pageToken = body['next-page-token'] ?? undefined
    } while (pageToken)
    return out
  }

  async loadTable(id: TableIdentifier): Promise<LoadedTable> {
    const what = `loading table ${[...id.namespace, id.name].join('.')}`
    const a = await this.send('GET', await this.url(this.tablePath(id)), undefined, 'table', what)
    if (a.status !== 200) fail(what, 'table', a)
    return this.loaded(id, a.text)
  }

  /**
   * Sends the schema with fresh ids (1.., breadth-first) and the partition spec built against it,
   * as PyIceberg's RestCatalog does; the server assigns its own ids again (same result).
   */
  async createTable(namespace: string[], request: CreateTableRequest): Promise<LoadedTable> {
    const id: TableIdentifier = { namespace: [...namespace], name: request.name }
    const what = `creating table ${[...namespace, request.name].join('.')}`
    const { schema } = assignFreshIds(request.schema)
    const spec = buildPartitionSpec(schema, request.partition ?? [])
    const properties: Record<string, string> = { ...request.properties, 'format-version': String(request.formatVersion ?? 2) }
    if (request.doc !== undefined) properties.comment = request.doc
    const body = stringifyLossless({
      name: request.name,
      schema,
      'partition-spec': spec,
      'write-order': { 'order-id': 0, fields: [] },
      'stage-create': false,
      properties,
    })
    const a = await this.send('POST', await this.url(`namespaces/${namespacePath(namespace)}/tables`), body, 'create', what)
    if (a.status !== 200) fail(what, 'create', a)
    return this.loaded(id, a.text)
  }

  async commitTable(table: LoadedTable, requirements: TableRequirement[], updates: TableUpdate[], opts: CommitOptions = {}): Promise<LoadedTable> {
    // The server may read what the metadata names the moment it commits: those writes finish first.
    await opts.ready
    const id = table.identifier
    const what = `committing to ${[...id.namespace, id.name].join('.')}`
    const body = stringifyLossless({ identifier: { namespace: id.namespace, name: id.name }, requirements, updates })
    // Resolve the URL (and config) before the commit request: a config failure is not a commit failure.
    const url = await this.url(this.tablePath(id))
    const a = await this.send('POST', url, body, 'commit', what)
    if (a.status !== 200) fail(what, 'commit', a)
    try {
      return this.loaded(id, a.text, table.io)
    } catch (err) {
      // The server said 200: committed, but we cannot read the result.
      throw new CommitStateUnknown(`${what}: committed, but the answer is unreadable: ${(err as Error).message}`)
    }
  }
}
