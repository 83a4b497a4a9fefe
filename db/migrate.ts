// Applies db/migrations to DATABASE_URL (npm run db:migrate; the dev stack and tests call migrateTo),
// then seals the catalog secrets that are not sealed under the current LHBOX_SECRETS_KEY: those an
// older edge stored in the clear, and those sealed with a key being rotated out (read-only store key pairs too).
import { fileURLToPath } from 'node:url'
import { migrate } from 'drizzle-orm/node-postgres/migrator'
import { nodeDb, nodePool } from './node.ts'
import { keyRing, open, seal, sealedKeyId, type KeyRing } from './sealed.ts'
import { catalogAuth, storeReadKeyBinding } from './catalog-secret.ts'

const migrationsFolder = fileURLToPath(new URL('./migrations', import.meta.url))

export async function migrateTo(url: string, secretsKey?: string): Promise<{ sealed: number; unsealed: number }> {
  const pool = nodePool(url, 1)
  // pool.end() resolves before its client has closed: an error on that idle client then (its database
  // dropped, as catalog-secrets.test.ts does next, or the server restarting) would be an uncaught event.
  pool.on('error', () => {})
  try {
    await migrate(nodeDb(pool), { migrationsFolder })
    const ring = keyRing(secretsKey)
    const { rows } = await pool.query(
      `select id, catalog, catalog_secret from warehouses where catalog ? 'token' or catalog ? 'credential' or catalog_secret is not null`,
    )
    if (!ring) return { sealed: 0, unsealed: rows.filter((r) => !r.catalog_secret).length }
    return { sealed: (await sealAll(pool, await ring, rows)) + (await resealStoreReadKeys(pool, await ring)), unsealed: 0 }
  } finally {
    await pool.end()
  }
}

type Row = { id: string; catalog: Record<string, unknown>; catalog_secret: string | null }

async function sealAll(pool: ReturnType<typeof nodePool>, ring: KeyRing, rows: Row[]): Promise<number> {
  let sealed = 0
  for (const r of rows) {
    if (r.catalog_secret && sealedKeyId(r.catalog_secret) === ring.current) continue
    const { token, credential, ...catalog } = r.catalog
    const secret = r.catalog_secret ? JSON.parse(await open(ring, r.catalog_secret, r.id)) : { token, credential }
    await pool.query('update warehouses set catalog = $2::jsonb, catalog_secret = $3 where id = $1', [
      r.id,
      JSON.stringify({ ...catalog, auth: catalogAuth(secret) }),
      await seal(ring, JSON.stringify(secret), r.id),
    ])
    sealed++
  }
  return sealed
}

/** Read-only store key pairs (always sealed: there is no clear form) sealed again under the current key. */
async function resealStoreReadKeys(pool: ReturnType<typeof nodePool>, ring: KeyRing): Promise<number> {
  const { rows } = await pool.query<{ id: string; store_read_key: string }>('select id, store_read_key from warehouses where store_read_key is not null')
  let sealed = 0
  for (const r of rows) {
    if (sealedKeyId(r.store_read_key) === ring.current) continue
    const plain = await open(ring, r.store_read_key, storeReadKeyBinding(r.id))
    await pool.query('update warehouses set store_read_key = $2 where id = $1', [r.id, await seal(ring, plain, storeReadKeyBinding(r.id))])
    sealed++
  }
  return sealed
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const url = process.env.DATABASE_URL
  if (!url) {
    console.error('DATABASE_URL is not set (source .lhbox/dev.env, or set it to your Postgres).')
    process.exit(2)
  }
  const { sealed, unsealed } = await migrateTo(url, process.env.LHBOX_SECRETS_KEY)
  console.log('migrations applied')
  if (sealed) console.log(`${sealed} catalog secret(s) sealed under the current LHBOX_SECRETS_KEY`)
  if (unsealed) console.log(`${unsealed} catalog secret(s) are in the clear: set LHBOX_SECRETS_KEY (as on the edge) and run this again`)
}
