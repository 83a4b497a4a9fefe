// POST /iceberg/v1/{prefix}/namespaces/{namespace}/register: a table named at a metadata file written
// before (a table dropped without purge, or written by another catalog over the same store). The file
// and the table location it names must both lie in the warehouse (createTable's rule): a registered
// table is signed and vended within its location, so it must never reach another warehouse's files.
import type { Context } from 'hono'
import { PartitionSpecError } from '../../iceberg/spec/partition.ts'
import type { AppEnv } from '../env.ts'
import { need } from './auth.ts'
import { readBody } from './body.ts'
import { badRequest, IcebergError } from './errors.ts'
import { namespaceParam } from './namespaces.ts'
import { RegisterTableRequest } from './schemas.ts'
import { checkLocation } from './location.ts'
import { answerTable, checkMetadata, refuseIfSink } from './tables.ts'
import { warehouseCatalogAt } from './warehouse.ts'

/** RegisterTableRequest → LoadTableResult; 409 AlreadyExistsException unless overwrite (refused for a sink's table). */
export async function registerTable(c: Context<AppEnv>) {
  need(c, 'write')
  const namespace = namespaceParam(c.req.param('namespace'))
  const body = await readBody(c, RegisterTableRequest)
  const id = { namespace, name: body.name }
  const location = body['metadata-location']
  const { warehouse, catalog } = await warehouseCatalogAt(c)
  await checkLocation(c, warehouse, catalog, location)
  if (!location.endsWith('.metadata.json')) throw badRequest(`metadata-location: a table metadata file (…/<n>-<uuid>.metadata.json), not ${location}`)
  // Read losslessly (snapshot ids are longs), never from the cache: the file may have been written over.
  const file = await catalog.readMetadata(location)
  const { metadata } = file
  if (metadata['format-version'] === 1) throw badRequest(`${location}: format version 1 tables are not served here (2 and 3 are)`)
  if (typeof metadata.location !== 'string') throw badRequest(`${location} is not Iceberg table metadata: it names no table location`)
  await checkLocation(c, warehouse, catalog, metadata.location)
  try {
    checkMetadata(metadata)
  } catch (err) {
    // Written by anyone: a shape the checks do not expect is the file's fault, never a 5xx.
    if (err instanceof IcebergError || err instanceof PartitionSpecError) throw err
    throw badRequest(`${location} is not table metadata this catalog serves: ${(err as Error).message}`)
  }
  if (body.overwrite) await refuseIfSink(c, catalog, id, 'overwrite')
  return answerTable(c, warehouse, await catalog.registerTable(id, location, file, body.overwrite))
}
