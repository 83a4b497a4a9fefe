// Node's client factory (dev stack, migrations, tests, roller tools): node-postgres.
import pg from 'pg'
import { drizzle } from 'drizzle-orm/node-postgres'
import * as schema from './schema.ts'

export function nodePool(url: string, max = 5): pg.Pool {
  return new pg.Pool({ connectionString: url, max })
}

export function nodeDb(pool: pg.Pool) {
  return drizzle(pool, { schema })
}
