// Applies db/migrations to DATABASE_URL (npm run db:migrate; the dev stack and tests call migrateTo).
import { fileURLToPath } from 'node:url'
import { migrate } from 'drizzle-orm/node-postgres/migrator'
import { nodeDb, nodePool } from './node.ts'

const migrationsFolder = fileURLToPath(new URL('./migrations', import.meta.url))

export async function migrateTo(url: string): Promise<void> {
  const pool = nodePool(url, 1)
  try {
    await migrate(nodeDb(pool), { migrationsFolder })
  } finally {
    await pool.end()
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const url = process.env.DATABASE_URL
  if (!url) {
    console.error('DATABASE_URL is not set (source .lhbox/dev.env, or set it to your Postgres).')
    process.exit(2)
  }
  await migrateTo(url)
  console.log('migrations applied')
}
