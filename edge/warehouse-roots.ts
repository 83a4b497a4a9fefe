// A warehouse's root: s3://<bucket>/<prefix>. Warehouses of every project may share a bucket (the
// deployment's S3_BUCKET by default), so no two roots may meet: one inside or equal to another would
// let one warehouse's tables reach the other's files, and a table's orphan sweep delete them.
// A new warehouse gets wh/<its id> when it names no prefix. Rows made before this rule keep theirs:
// several may share the bucket root (prefix ''); the edge still serves them, and a root of the
// default shape may be made inside one (its random id is no folder a legacy table can have chosen).
import type { EdgeDb } from '../db/edge.ts'
import { ApiError } from './errors.ts'

/** The folder holding the default roots; a prefix given at create may not use it. */
const DEFAULT_ROOTS = 'wh'
/** The intake's folder at the bucket root (contract/bucket.ts): never a warehouse's or a table's. */
export const INTAKE_FOLDER = '_sink'

export const defaultPrefix = (warehouseId: string) => `${DEFAULT_ROOTS}/${warehouseId}`

/** A prefix as compared and stored: no leading or trailing slash ('' is the whole bucket). */
export const normalPrefix = (prefix: string) => prefix.replace(/^\/+|\/+$/g, '')

const firstSegment = (key: string) => key.split('/')[0]

/** Why a prefix given at create cannot be a root (a 400), or null: the intake's folder, the default roots' folder. */
export function prefixProblem(prefix: string): string | null {
  const first = firstSegment(normalPrefix(prefix))
  if (first === INTAKE_FOLDER) return `a prefix may not begin with ${INTAKE_FOLDER}: the intake's folder is every sink's`
  if (first === DEFAULT_ROOTS)
    return `a prefix may not begin with ${DEFAULT_ROOTS}: that folder holds the roots warehouses get by default (leave prefix out for one)`
  return null
}

/** How root `a` meets root `b` in one bucket (normalized prefixes), or null when they are apart. */
export function rootsMeet(a: string, b: string): 'equal' | 'contains' | 'inside' | null {
  if (a === b) return 'equal'
  if (a === '' || b.startsWith(`${a}/`)) return 'contains'
  if (b === '' || a.startsWith(`${b}/`)) return 'inside'
  return null
}

interface Other {
  id: string
  project_id: string
  name: string
  prefix: string
}

/**
 * Runs `insert` only when root (bucket, prefix) meets no other warehouse's, under a transaction lock
 * on the bucket: two creates racing for one root are decided one after the other. 409
 * warehouse_location_taken otherwise. The bucket alone is compared, not the endpoint: one store is
 * reached by many spellings of its URL, and a same-named bucket elsewhere costs only another prefix.
 */
export async function claimRoot<T>(db: EdgeDb, w: { id: string; projectId: string; bucket: string; prefix: string }, insert: () => Promise<T>): Promise<T> {
  const client = db.$client
  await client.query('begin')
  try {
    await client.query(`select pg_advisory_xact_lock(hashtext('lhbox.warehouse-root:' || $1))`, [w.bucket])
    // The rows meeting the root; one shared at the bucket root (prefix '') sorts last: it alone may be lived with.
    const { rows } = await client.query(
      `select id, project_id, name, btrim(prefix, '/') as prefix from warehouses
        where bucket = $1 and id <> $2 and ($3 = '' or btrim(prefix, '/') = ''
          or starts_with($3 || '/', btrim(prefix, '/') || '/') or starts_with(btrim(prefix, '/') || '/', $3 || '/'))
        order by btrim(prefix, '/') = '' limit 1`,
      [w.bucket, w.id, w.prefix],
    )
    const other = rows[0] as Other | undefined
    const legacyRoot = other?.prefix === '' && w.prefix === defaultPrefix(w.id)
    if (other && !legacyRoot) throw taken(w, other)
    const made = await insert()
    await client.query('commit')
    return made
  } catch (err) {
    await client.query('rollback').catch(() => undefined)
    throw err
  }
}

function taken(w: { projectId: string; bucket: string; prefix: string }, other: Other): ApiError {
  const at = `s3://${w.bucket}${w.prefix ? `/${w.prefix}` : ''}`
  const how = rootsMeet(w.prefix, other.prefix)
  const whose = other.project_id === w.projectId ? `warehouse ${other.name}'s root` : `the root of a warehouse of another project`
  const what = how === 'equal' ? `is ${whose}` : how === 'contains' ? `contains ${whose}` : `lies inside ${whose}`
  const hint = other.prefix === '' ? ' (it holds the whole bucket: leave prefix out for a root of its own)' : ': give another prefix, or leave it out'
  return new ApiError(409, 'warehouse_location_taken', `${at} ${what}${hint}`, { bucket: w.bucket, prefix: w.prefix })
}
