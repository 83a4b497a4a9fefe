// The Worker entry: the API (fetch) and the ledger pruning cron (scheduled).
import { createApp } from './app.ts'
import type { Env } from './env.ts'

const app = createApp()

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>
