// POST /iceberg/v1/{prefix}/namespaces/{namespace}/tables/{table}/sign: the REST spec's S3 signer
// (S3SignRequest {region, uri, method, headers} → S3SignResponse {uri, headers}), as PyIceberg's
// S3V4RestSigner and Java's S3V4RestSignerClient call it: the request is signed (SigV4) with the store
// identity the edge itself uses for the warehouse, only when it lies under this table's location and,
// for a read key, only reads (sign-scope.ts); anything else is 403 ForbiddenException.
import { AwsV4Signer } from 'aws4fetch'
import type { Context } from 'hono'
import * as v from 'valibot'
import { NoSuchTable } from '../../iceberg/catalog/index.ts'
import type { AppEnv } from '../env.ts'
import { levelAtLeast } from '../keys.ts'
import { answer, readBody } from './body.ts'
import { forbidden } from './errors.ts'
import { checkSignRequest, SignRefused } from './sign-scope.ts'
import { tableParam } from './tables.ts'
import { warehouseCatalogAt } from './warehouse.ts'

const S3SignRequest = v.object({
  region: v.string(),
  uri: v.pipe(v.string(), v.maxLength(8192)),
  method: v.pipe(v.string(), v.maxLength(16)),
  headers: v.record(v.string(), v.array(v.string())),
})

/** Headers the signature covers: every x-amz-* the client sends (S3 wants them signed) and Content-MD5. */
const SIGNED = /^(x-amz-|content-md5$)/i
/** Headers the signer sets itself. */
const OURS = /^(authorization|host|x-amz-date|x-amz-security-token)$/i

export async function signRequest(c: Context<AppEnv>) {
  const body = await readBody(c, S3SignRequest)
  const id = tableParam(c)
  // An engine signs every S3 request of a scan or write: the metadata file is this isolate's (recent-metadata.ts), not read again each time.
  const { warehouse: w, catalog } = await warehouseCatalogAt(c)
  const write = levelAtLeast(c.var.principal.level, 'write')
  // A table being created (a staged create) has no location yet but its default one; only a writer writes there.
  const location = await catalog.loadTable(id).then(
    (t) => t.metadata.location,
    (err) => {
      if (err instanceof NoSuchTable && write) return catalog.defaultLocation(id)
      throw err
    },
  )
  try {
    checkSignRequest({ endpoint: w.endpoint, location, access: write ? 'write' : 'read' }, body.method, body.uri, body.headers)
  } catch (err) {
    if (err instanceof SignRefused) throw forbidden(`not signed: ${err.message}`)
    throw err
  }
  const sent = Object.entries(body.headers).filter(([name]) => !OURS.test(name))
  const signer = new AwsV4Signer({
    method: body.method.toUpperCase(),
    url: body.uri,
    headers: sent.filter(([name]) => SIGNED.test(name)).map(([name, values]) => [name, values.join(',')]),
    accessKeyId: c.env.S3_ACCESS_KEY_ID,
    secretAccessKey: c.env.S3_SECRET_ACCESS_KEY,
    service: 's3',
    region: w.region,
  })
  const signed = await signer.sign()
  // Every header to send (Java's client replaces the request's headers with these): the client's own, then the signature's.
  const headers: Record<string, string[]> = Object.fromEntries(sent)
  for (const [name, value] of signed.headers) {
    for (const k of Object.keys(headers)) if (k.toLowerCase() === name) delete headers[k]
    headers[name] = [value]
  }
  return answer(c, { uri: body.uri, headers })
}
