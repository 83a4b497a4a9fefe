// The baseline of `npm run bench:intake`: what the send route cannot avoid doing, and nothing else.
// Per request, exactly as edge/routes/send.ts does it:
//   - the body read whole, its SHA-256;
//   - one database connection made as db/edge.ts makes it (@neondatabase/serverless over the ws bridge);
//   - the SAME single ledger statement (ledgerStatement of edge/ledger.ts — imported, not copied, so it
//     cannot drift);
//   - the SAME single PUT (iceberg/io/s3.ts S3Client via edge/s3.ts, same key and headers);
//   - receiving → pending (markStored) deferred past the answer, then the connection closed — the real
//     route does this on every 202 too, so the database sees the same work from both.
// No Hono, no routing, no send-key check (the sink id and the key's hash come as --var), no
// Idempotency-Key/Content-Type/body-limit checks, no JSON scan: the body is stored as sent.
import { edgeClient, edgeDb } from '../../../db/edge.ts'
import { ledgerStatement, markStored } from '../../../edge/ledger.ts'
import type { Env } from '../../../edge/env.ts'
import { bucketClient } from '../../../edge/s3.ts'

interface BareEnv extends Env {
  BENCH_SINK_ID: string
  BENCH_SEND_KEY_SHA256: string
  /** Rows per request body (the bench sends a fixed body shape). */
  BENCH_ROWS: string
}

function hex(buf: ArrayBuffer): string {
  return [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, '0')).join('')
}

export default {
  async fetch(req, env, ctx) {
    if (req.method !== 'POST') return new Response('bare worker\n') // readiness probe
    const body = new Uint8Array(await req.arrayBuffer())
    const batchId = req.headers.get('idempotency-key') ?? crypto.randomUUID()
    const sinkId = env.BENCH_SINK_ID
    const rows = Number(env.BENCH_ROWS)
    const client = edgeClient({ url: env.DATABASE_URL, wsProxy: env.NEON_WS_PROXY })
    try {
      await client.connect()
    } catch {
      return new Response('database unavailable\n', { status: 503 })
    }
    const db = edgeDb(client)
    let deferred = false
    try {
      const ledger = await ledgerStatement(db, {
        sinkId,
        batchId,
        bodySha256: hex(await crypto.subtle.digest('SHA-256', body)),
        bytes: body.length,
        rows,
        rejected: 0,
        reasons: [],
        sendKeySha256: env.BENCH_SEND_KEY_SHA256,
      })
      if (!ledger.sink || !ledger.batch) return new Response('no such sink\n', { status: 401 })
      const row = ledger.batch
      await bucketClient(env, ledger.sink).put(`_sink/${sinkId}/${batchId}.ndjson`, body, {
        contentType: 'application/x-ndjson',
        metadata: { received: row.receivedAt, rows: String(row.rows), sink: sinkId },
      })
      ctx.waitUntil(markStored(db, sinkId, batchId).finally(() => client.end().catch(() => undefined)))
      deferred = true
      return Response.json(
        { accepted: row.rows, rejected: 0, reasons: [], batch_id: batchId, bytes: row.bytes, received_at: row.receivedAt, state: 'pending' },
        { status: row.inserted ? 202 : 200 },
      )
    } catch (err) {
      return new Response(`bare worker: ${(err as Error).message}\n`, { status: 503 })
    } finally {
      if (!deferred) ctx.waitUntil(client.end().catch(() => undefined))
    }
  },
} satisfies ExportedHandler<BareEnv>
