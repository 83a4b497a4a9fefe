// DEPLOY.md, checked (issue 14 §7): every block marked `sh offline` runs as written — the secrets, the
// migration (on a database of its own), the Worker's production bundle (its gzip size printed, and
// refused past 3 MiB), the Node edge (it serves /healthz and makes a key) — and compose.yaml,
// deploy/k8s/lhbox.yaml and the Dockerfiles give the edge and the roller every setting their code
// requires, on the ports their probes ask.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse as parseYaml, parseAllDocuments } from 'yaml'
import { keyRing } from '../../db/sealed.ts'
import { WRANGLER_OFFLINE } from '../../dev/wrangler.ts'
import { nodeEnv } from '../../edge/node.ts'
import { loadConfig } from '../../roller/config.ts'
import { RollerMetrics } from '../../roller/metrics.ts'
import { freePorts } from '../support/ports.ts'
import { poll, uid } from '../support/sinks.ts'
import { stack } from '../support/stack.ts'

const DOC = readFileSync('DEPLOY.md', 'utf8')
const OFFLINE = [...DOC.matchAll(/```sh offline\n([\s\S]*?)```/g)].map((m) => m[1])
const block = (first: string) => {
  const b = OFFLINE.find((x) => x.startsWith(first))
  if (!b) throw new Error(`DEPLOY.md has no offline block starting ${first}`)
  return b
}
const MAX_GZIP = 3 * 1024 * 1024

/** Runs a block in bash with `env` (on top of this process's), then prints the variables asked for. */
function runBlock(script: string, env: Record<string, string>, print: string[] = []) {
  const r = spawnSync('bash', ['-euo', 'pipefail', '-c', `${script}\n${print.map((v) => `echo "${v}=\${${v}}"`).join('\n')}`], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 180_000,
  })
  const vars = Object.fromEntries([...r.stdout.matchAll(/^([A-Z0-9_]+)=(.*)$/gm)].map((m) => [m[1], m[2]]))
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, vars }
}

const exampleEnv = (): Record<string, string> =>
  Object.fromEntries([...readFileSync('deploy/lhbox.env.example', 'utf8').matchAll(/^([A-Z0-9_]+)=(.*)$/gm)].map((m) => [m[1], m[2]]))

describe('DEPLOY.md', { timeout: 240_000 }, () => {
  const dbName = `deploy_${uid()}`
  let databaseUrl: string
  let secrets: { LHBOX_BOOTSTRAP_SECRET: string; LHBOX_SECRETS_KEY: string }
  let admin: pg.Client

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: stack().databaseUrl })
    await admin.connect()
    await admin.query(`create database ${dbName}`)
    databaseUrl = stack().databaseUrl.replace(/\/[^/?]+(\?|$)/, `/${dbName}$1`)
  })

  afterAll(async () => {
    await admin?.query(`drop database if exists ${dbName} with (force)`)
    await admin?.end()
    rmSync('dist/worker', { recursive: true, force: true })
  })

  it('has the offline blocks this test runs', () => {
    expect(OFFLINE).toHaveLength(4)
  })

  it('step 1 makes a bootstrap secret and a secrets key the edge accepts', async () => {
    const r = runBlock(block('export LHBOX_BOOTSTRAP_SECRET'), {}, ['LHBOX_BOOTSTRAP_SECRET', 'LHBOX_SECRETS_KEY'])
    expect(r.code, r.stderr).toBe(0)
    secrets = r.vars as typeof secrets
    expect(secrets.LHBOX_BOOTSTRAP_SECRET).toMatch(/^[A-Za-z0-9_-]{32}$/)
    const ring = await keyRing(secrets.LHBOX_SECRETS_KEY)
    expect(ring?.current).toBe('k1')
  })

  it('step 2 migrates a fresh Postgres', async () => {
    const r = runBlock(block('export DATABASE_URL'), { DATABASE_URL: databaseUrl, ...secrets })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain('migrations applied')
    const db = new pg.Client({ connectionString: databaseUrl })
    await db.connect()
    try {
      const { rows } = await db.query(
        `select count(*)::int as n from information_schema.columns where table_name = 'warehouses' and column_name = 'catalog_secret'`,
      )
      expect(rows[0].n).toBe(1)
    } finally {
      await db.end()
    }
  })

  it('step 5 builds the Worker’s production bundle, under 3 MiB gzipped', () => {
    const r = runBlock(block('npx wrangler deploy --dry-run'), { ...WRANGLER_OFFLINE, CI: 'true' })
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0)
    const js = readFileSync('dist/worker/index.js')
    const gzipped = gzipSync(js).length
    console.log(`worker bundle: ${js.length} bytes, ${gzipped} bytes gzipped (limit ${MAX_GZIP})`)
    expect(gzipped).toBeLessThan(MAX_GZIP)
    // The Worker holds no Avro, manifest or Parquet-writing code, nor the Node host's (DESIGN.md).
    const text = js.toString('utf8')
    expect(text).not.toContain('@hono/node-server')
    expect(text).not.toContain('hyparquet-writer')
  })

  it('step 5 on Node: npm run edge serves the API on the migrated database', async () => {
    const [port] = await freePorts(1)
    const s3 = stack().s3
    const env = {
      ...secrets,
      DATABASE_URL: databaseUrl,
      S3_ENDPOINT: s3.endpoint,
      S3_BUCKET: s3.bucket,
      S3_REGION: s3.region,
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      LHBOX_EDGE_PORT: String(port),
    }
    // The block backgrounds the edge: bash is the group leader, so the group is stopped together.
    const child = spawn('bash', ['-euo', 'pipefail', '-c', `${block('export S3_ENDPOINT')}\nwait`], {
      env: { ...process.env, ...env },
      detached: true,
      stdio: 'ignore',
    })
    try {
      const url = `http://127.0.0.1:${port}`
      await poll(async () => (await fetch(`${url}/healthz`).catch(() => null))?.status === 200, 60_000, 'the Node edge’s /healthz')
      const made = await fetch(`${url}/internal/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secrets.LHBOX_BOOTSTRAP_SECRET}`, 'content-type': 'application/json' },
        body: JSON.stringify({ project: 'main', level: 'admin' }),
      })
      expect(made.status).toBe(201)
      const { key } = (await made.json()) as { key: string }
      const listed = await fetch(`${url}/v1/warehouses`, { headers: { authorization: `Bearer ${key}` } })
      expect(listed.status).toBe(200)
    } finally {
      process.kill(-(child.pid as number), 'SIGTERM')
    }
  })

  it('compose.yaml gives the edge, the roller and the migration every setting their code requires', () => {
    const compose = parseYaml(readFileSync('compose.yaml', 'utf8')) as { services: Record<string, any> }
    const base = exampleEnv()
    const envOf = (name: string) => {
      const svc = compose.services[name]
      expect(svc.env_file).toEqual(['lhbox.env'])
      return { ...base, ...(svc.environment ?? {}) }
    }
    expect(() => nodeEnv(envOf('edge'))).not.toThrow()
    expect(() => loadConfig(envOf('roller'))).not.toThrow()
    expect(envOf('edge').S3_ENDPOINT).toBe(`http://s3:${compose.services.s3.command[1].slice(1)}`)
    expect(envOf('roller').LHBOX_URL).toBe(`http://edge:${compose.services.edge.ports[0].split(':').at(-1)}`)
    expect(envOf('migrate').DATABASE_URL).toMatch(/@postgres:5432\//)
    for (const svc of ['edge', 'roller', 'migrate']) {
      const dockerfile = compose.services[svc].build.dockerfile as string
      expect(existsSync(dockerfile), dockerfile).toBe(true)
    }
    // Every secret the services read is one the example file asks to set.
    for (const v of ['DATABASE_URL', 'LHBOX_BOOTSTRAP_SECRET', 'LHBOX_SECRETS_KEY', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'POSTGRES_PASSWORD'])
      expect(base[v], v).toContain('CHANGE-ME')
  })

  it('the Kubernetes Deployments give their containers every setting, and probe the ports they serve', async () => {
    const docs = parseAllDocuments(readFileSync('deploy/k8s/lhbox.yaml', 'utf8')).map((d) => d.toJS())
    const deployment = (name: string) => docs.find((d) => d.kind === 'Deployment' && d.metadata.name === name)
    const containerEnv = (c: any) => ({ ...exampleEnv(), ...Object.fromEntries((c.env ?? []).map((e: any) => [e.name, e.value ?? 'from-field'])) })
    const roller = deployment('lhbox-roller').spec.template.spec.containers[0]
    expect(roller.envFrom).toEqual([{ secretRef: { name: 'lhbox' } }])
    const rollerConfig = loadConfig(containerEnv(roller))
    expect(roller.ports).toEqual([{ name: 'metrics', containerPort: rollerConfig.metricsPort }])
    for (const probe of [roller.livenessProbe, roller.readinessProbe]) expect(probe.httpGet).toEqual({ path: '/healthz', port: 'metrics' })
    expect(deployment('lhbox-roller').spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(rollerConfig.leaseSeconds)
    // The autoscaler scales that Deployment on the gauge the roller serves.
    const hpa = docs.find((d) => d.kind === 'HorizontalPodAutoscaler')
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'lhbox-roller' })
    const served = await new RollerMetrics().registry.getSingleMetric('lhbox_sinks_due')?.get()
    expect(served?.name).toBe('lhbox_sinks_due')
    expect(hpa.spec.metrics.map((m: any) => m.external.metric.name)).toEqual(['lhbox_sinks_due'])

    const edge = deployment('lhbox-edge').spec.template.spec.containers[0]
    expect(() => nodeEnv(containerEnv(edge))).not.toThrow()
    expect(edge.ports).toEqual([{ name: 'http', containerPort: Number(containerEnv(edge).LHBOX_EDGE_PORT) }])
    expect(edge.readinessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' })
    // The Dockerfiles' commands run files that exist.
    for (const f of ['edge/Dockerfile', 'roller/Dockerfile']) {
      const cmd = /^CMD \[(.*)\]$/m.exec(readFileSync(f, 'utf8'))?.[1] ?? ''
      const script = JSON.parse(`[${cmd}]`).find((a: string) => a.endsWith('.ts'))
      expect(existsSync(script), `${f}: ${script}`).toBe(true)
    }
  })
})
