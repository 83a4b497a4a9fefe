// A fleet of sinks and a ledger with history, for the benches that measure the ledger at fleet scale
// (bench:ledger, bench:intake --sinks): projects and warehouses made through the API, then sinks,
// their usage and audit rows and the ledger's batches inserted with generate_series, shaped as the
// app writes them (edge/routes/sinks.ts, edge/ledger.ts, the roller's reports through
// edge/roller-ledger.ts):
//   - `due` sinks (i ≤ due) are overdue: 1–20 batches pending longer than their roll_seconds (300),
//     each sink overdue by a different amount (1–11 minutes), so "most overdue first" has an order;
//   - `waiting` sinks (the next 20 %) have 1–5 batches received in the last 5 minutes and roll_seconds
//     3600: not due for the next 55 minutes, however long the bench takes;
//   - every other sink has nothing waiting (roll_seconds 60–3600); one in 97 of them is disabled;
//   - 2 % more sinks are deleted, their batches discarded 8–40 days ago (pruned by the 7-day rule);
//   - `ledgerRows` committed batches over the last 9 days in arrival order (the heap in time order, as
//     a real ledger is), skewed over the live sinks (a few busy, most light), with their snapshot ids:
//     a 7-day prune finds about 2/9 of them, an edge whose hourly prune has not run for two days.
// The batches' three indexes and primary key are dropped for the bulk insert and made again from
// their own definitions (pg_get_constraintdef, pg_indexes), so the table ends exactly as migrated.
import { parseArgs } from 'node:util'
import type pg from 'pg'

interface FleetSink {
  id: string
  sendKey: string
  warehouseId: string
  projectId: string
}

export interface Fleet {
  sinks: FleetSink[]
  due: number
  waiting: number
  deleted: number
  /** Rows in `batches` by state after seeding. */
  ledger: Record<string, number>
  /** Rows the 7-day prune rule finds (committed or discarded more than 7 days ago). */
  prunable: number
  seedSeconds: number
}

export interface FleetWarehouse {
  id: string
  projectId: string
}

/** An admin key per project (POST /internal/keys) and its warehouses (POST /v1/warehouses): `layout` is warehouses per project. */
export async function fleetWarehouses(
  apiUrl: string,
  bootstrapSecret: string,
  layout: Record<string, number>,
): Promise<{ warehouses: FleetWarehouse[]; keys: Record<string, string> }> {
  const call = async (path: string, auth: string, json: unknown) => {
    const res = await fetch(apiUrl + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
      body: JSON.stringify(json),
    })
    const text = await res.text()
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${text}`)
    return JSON.parse(text)
  }
  const warehouses: FleetWarehouse[] = []
  const keys: Record<string, string> = {}
  for (const [project, count] of Object.entries(layout)) {
    const created = await call('/internal/keys', bootstrapSecret, { project, level: 'admin', name: 'fleet bench' })
    keys[project] = created.key
    for (let k = 0; k < count; k++) {
      const w = await call('/v1/warehouses', created.key, { name: `${project}-wh${k}`, catalog: { type: 'sql' } })
      warehouses.push({ id: w.id, projectId: created.project_id })
    }
  }
  return { warehouses, keys }
}

const CHUNK = 1_000_000

/** Seeds the fleet (see the top of this file) through a direct Postgres connection. */
export async function seedFleet(
  db: pg.Client,
  o: { sinks: number; due: number; ledgerRows: number; warehouses: FleetWarehouse[]; log: (line: string) => void },
): Promise<Fleet> {
  const t0 = Date.now()
  if (o.due > o.sinks) throw new Error(`--due ${o.due} is more than --sinks ${o.sinks}`)
  const seed = crypto.randomUUID()
  const waiting = Math.floor(o.sinks / 5)
  const deleted = Math.ceil(o.sinks / 50)
  const whIds = o.warehouses.map((w) => w.id)
  const whProjects = o.warehouses.map((w) => w.projectId)

  // Sinks: as POST /v1/sinks inserts them (send key SHA-256, policy, state), with what the roller's
  // reports leave on a sink that has rolled (last_roll, maintenance_last).
  const { rows } = await db.query<{ id: string; send_key: string; warehouse_id: string; project_id: string }>(
    `with w as (
       select ord::int, id, project_id from unnest($5::text[], $6::text[]) with ordinality as t(id, project_id, ord)
     ), gen as (
       select i, 'snk_' || substr(md5($1 || ':sink:' || i), 1, 16) as id,
              'al_send_' || substr(md5($1 || ':key:' || i), 1, 12) || '_'
                || rtrim(translate(encode(sha256(convert_to($1 || ':secret:' || i, 'UTF8')), 'base64'), '+/', '-_'), '=') as send_key,
              case when i <= $3 then 300 when i <= $3 + $4 then 3600 else (array[60, 300, 300, 900, 3600])[1 + i % 5] end as roll_seconds,
              case when i > $3 + $4 and i % 97 = 0 then 'disabled' else 'active' end as state
       from generate_series(1, $2::int) i
     ), placed as (
       select g.*, w.id as warehouse_id, w.project_id from gen g join w on w.ord = 1 + (g.i - 1) % cardinality($5::text[])
     ), ins as (
       insert into sinks (id, project_id, warehouse_id, name, table_namespace, table_name, send_key_sha256, roll_seconds, state,
                          disabled_reason, last_roll, maintenance_last, created_at)
       select id, project_id, warehouse_id, 'fleet_' || i, 'fleet', 't_' || i, encode(sha256(convert_to(send_key, 'UTF8')), 'hex'), roll_seconds, state,
              case when state = 'disabled' then 'upsert_rewrite_too_large' end,
              jsonb_build_object('at', to_char((now() - make_interval(secs => roll_seconds + i % 600)) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                                 'batches', 1 + i % 40, 'rows', 10 * (1 + i % 40), 'rejected_rows', 0,
                                 'snapshot_id', (('x' || substr(md5($1 || ':snap:' || i), 1, 15))::bit(60)::bigint)::text, 'seconds', 1 + i % 3),
              jsonb_build_object('at', to_char((now() - make_interval(hours => i % 6)) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                                 'next_at', to_char((now() + make_interval(hours => 6 - i % 6)) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                                 'snapshots_expired', i % 20, 'files_compacted', i % 7, 'bytes_compacted', (i % 7) * 1048576,
                                 'manifests_rewritten', i % 3, 'manifests_created', least(1, i % 3), 'files_deleted', i % 9,
                                 'bytes_deleted', (i % 9) * 524288, 'seconds', 2),
              now() - interval '60 days' + make_interval(secs => i)
       from placed
       returning id
     )
     select p.id, p.send_key, p.warehouse_id, p.project_id from placed p where (select count(*) from ins) > 0 order by p.i`,
    [seed, o.sinks, o.due, waiting, whIds, whProjects],
  )
  const sinks = rows.map((r) => ({ id: r.id, sendKey: r.send_key, warehouseId: r.warehouse_id, projectId: r.project_id }))

  // Deleted sinks, as DELETE /v1/sinks/{id} leaves them.
  await db.query(
    `with w as (select ord::int, id, project_id from unnest($3::text[], $4::text[]) with ordinality as t(id, project_id, ord))
     insert into sinks (id, project_id, warehouse_id, name, table_namespace, table_name, send_key_sha256, state, created_at, deleted_at)
     select 'snk_' || substr(md5($1 || ':deleted:' || k), 1, 16), w.project_id, w.id, 'fleet_deleted_' || k, 'fleet', 'deleted_' || k,
            encode(sha256(convert_to($1 || ':deleted-key:' || k, 'UTF8')), 'hex'), 'deleted',
            now() - interval '90 days', now() - make_interval(days => 8 + k % 30)
     from generate_series(1, $2::int) k join w on w.ord = 1 + (k - 1) % cardinality($3::text[])`,
    [seed, deleted, whIds, whProjects],
  )

  // Usage: three months a sink (the send statement's upsert), and the sink.create audit events.
  await db.query(
    `insert into usage_counters (project_id, sink_id, month, batches, bytes, rows_accepted, rows_rejected)
     select s.project_id, s.id, (date_trunc('month', now() at time zone 'UTC') - make_interval(months => m))::date,
            100 + n % 5000, (100 + n % 5000) * 2048, (100 + n % 5000) * 10, n % 7
     from (select id, project_id, row_number() over () as n from sinks where name like 'fleet\\_%') s cross join generate_series(0, 2) m`,
  )
  await db.query(
    `insert into audit_events (project_id, at, actor, action, subject, details)
     select s.project_id, s.created_at, 'bench', 'sink.create', s.id,
            jsonb_build_object('name', s.name, 'warehouse', w.name, 'table', s.table_namespace || '.' || s.table_name)
     from sinks s join warehouses w on w.id = s.warehouse_id where s.name like 'fleet\\_%'`,
  )

  // The ledger's history, in arrival order, indexes dropped meanwhile (made again below).
  const pk = (
    await db.query<{ name: string; def: string }>(
      `select conname as name, pg_get_constraintdef(oid) as def from pg_constraint where conrelid = 'batches'::regclass and contype = 'p'`,
    )
  ).rows
  const indexes = (
    await db.query<{ name: string; def: string }>(
      `select indexname as name, indexdef as def from pg_indexes where schemaname = 'public' and tablename = 'batches'
         and indexname not in (select conname from pg_constraint where conrelid = 'batches'::regclass)`,
    )
  ).rows
  await db.query(`set session_replication_role = replica`) // no FK trigger per row: the sink ids are the ones inserted above
  for (const i of indexes) await db.query(`drop index ${i.name}`)
  for (const c of pk) await db.query(`alter table batches drop constraint ${c.name}`)
  for (let lo = 1; lo <= o.ledgerRows; lo += CHUNK) {
    const hi = Math.min(o.ledgerRows, lo + CHUNK - 1)
    const t = Date.now()
    await db.query(
      `insert into batches (sink_id, batch_id, body_sha256, bytes, rows, rejected, reasons, received_at, state, snapshot_id, committed_at)
       select 'snk_' || substr(md5($1 || ':sink:' || s), 1, 16), md5($1 || ':batch:' || j)::uuid::text,
              md5($1 || ':body:' || j) || md5($1 || ':body2:' || j), 200 + (j * 7919) % 100000, 1 + j % 500,
              case when j % 53 = 0 then 1 else 0 end,
              case when j % 53 = 0 then '[{"index": 0, "reason": "not_an_object"}]'::jsonb else '[]'::jsonb end,
              date_trunc('microseconds', at - make_interval(secs => 5 + j % 600)), 'committed',
              ('x' || substr(md5($1 || ':snap:' || s || ':' || j / 20), 1, 15))::bit(60)::bigint, at
       from (select j, 1 + (floor($5::int * power(random(), 2))::bigint * 7919) % $5::int as s,
                    now() - interval '9 days' + (j::float8 / $4::float8) * (interval '9 days' - interval '15 minutes') as at
             from generate_series($2::bigint, $3::bigint) j) x`,
      [seed, lo, hi, o.ledgerRows, o.sinks],
    )
    o.log(`ledger history: ${hi.toLocaleString('en-US')} / ${o.ledgerRows.toLocaleString('en-US')} rows (${((Date.now() - t) / 1000).toFixed(1)} s)`)
  }
  // The deleted sinks' batches, discarded at their delete.
  await db.query(
    `insert into batches (sink_id, batch_id, body_sha256, bytes, rows, received_at, state)
     select 'snk_' || substr(md5($1 || ':deleted:' || (1 + j % $2::int)), 1, 16), md5($1 || ':discarded:' || j)::uuid::text,
            md5($1 || ':dbody:' || j) || md5($1 || ':dbody2:' || j), 1000, 10, now() - make_interval(days => 8 + j % 32), 'discarded'
     from generate_series(1, $3::int) j`,
    [seed, deleted, Math.max(deleted, Math.floor(o.ledgerRows / 200))],
  )
  const t1 = Date.now()
  await db.query(`set maintenance_work_mem = '512MB'`)
  for (const c of pk) await db.query(`alter table batches add constraint ${c.name} ${c.def}`)
  for (const i of indexes) await db.query(i.def)
  await db.query(`set session_replication_role = origin`)
  o.log(`ledger indexes made again: ${[...pk, ...indexes].map((i) => i.name).join(', ')} (${((Date.now() - t1) / 1000).toFixed(1)} s)`)

  // What waits: the due sinks' batches, overdue by 1–11 minutes; the waiting sinks' recent ones.
  await db.query(
    `insert into batches (sink_id, batch_id, body_sha256, bytes, rows, received_at, state)
     select 'snk_' || substr(md5($1 || ':sink:' || i), 1, 16), md5($1 || ':pending:' || i || ':' || k)::uuid::text,
            md5($1 || ':pbody:' || i || ':' || k) || md5($1 || ':pbody2:' || i || ':' || k), 1024, 10,
            date_trunc('microseconds', case when i <= $2 then now() - make_interval(secs => 300 + 60 + (i * 37) % 600) + make_interval(secs => k * 2)
                 else now() - make_interval(secs => (i * 13) % 300 + k) end),
            'pending'
     from generate_series(1, $2::int + $3::int) i
     cross join lateral generate_series(1, case when i <= $2 then 1 + i % 20 else 1 + i % 5 end) k`,
    [seed, o.due, waiting],
  )
  const t2 = Date.now()
  await db.query('vacuum analyze batches')
  await db.query('vacuum analyze sinks')
  await db.query('vacuum analyze usage_counters')
  await db.query('checkpoint')
  o.log(`vacuum analyze + checkpoint: ${((Date.now() - t2) / 1000).toFixed(1)} s`)
  const counts = await db.query<{ state: string; n: string }>(`select state, count(*) as n from batches group by state`)
  const prunable = await db.query<{ n: string }>(
    `select (select count(*) from batches where state = 'committed' and committed_at < now() - interval '7 days')
          + (select count(*) from batches where state = 'discarded' and received_at < now() - interval '7 days') as n`,
  )
  return {
    sinks,
    due: o.due,
    waiting,
    deleted,
    ledger: Object.fromEntries(counts.rows.map((r) => [r.state, Number(r.n)])),
    prunable: Number(prunable.rows[0].n),
    seedSeconds: (Date.now() - t0) / 1000,
  }
}

/** `--name N` options (N may be written 10_000 or 10,000), each with its default. */
export function intOptions<K extends string>(defaults: Record<K, number>, argv = process.argv.slice(2)): Record<K, number> {
  const { values } = parseArgs({
    args: argv,
    options: Object.fromEntries(Object.keys(defaults).map((k) => [k, { type: 'string' }])) as Record<K, { type: 'string' }>,
    strict: true,
  })
  const out = { ...defaults }
  for (const k of Object.keys(defaults) as K[]) {
    const raw = (values as Record<string, string | undefined>)[k]
    if (raw === undefined) continue
    const n = Number(raw.replace(/[_,]/g, ''))
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`--${k} ${raw}: expected a whole number`)
    out[k] = n
  }
  return out
}
