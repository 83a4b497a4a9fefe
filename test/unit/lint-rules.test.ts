// The lint rules bite: the project's .dependency-cruiser.cjs, run as `npm run lint` runs it, on small
// trees written to a temporary folder. A wrong-way import, an upward import between iceberg's rooms
// and a type-only cycle are each reported; the same layout with the doors respected passes.
// Also: the Workers program (tsconfig.workers.json) loads no Node types.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const CONFIG = join(ROOT, '.dependency-cruiser.cjs')
const DEPCRUISE = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs')
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc')

// Generous: these start a Node process each; nothing here waits on a clock.
const SLOW = { timeout: 120_000 }

const made: string[] = []
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'lhbox-lint-rules-'))
  made.push(dir)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  return dir
}

interface Violation {
  from: string
  to: string
  rule: { name: string; severity: string }
  cycle?: { name: string }[]
}

/** The violations, as dependency-cruiser's JSON report lists them. */
function depcruise(dir: string): Violation[] {
  const run = spawnSync(process.execPath, [DEPCRUISE, '--config', CONFIG, '--output-type', 'json', '.'], { cwd: dir, encoding: 'utf8' })
  if (run.status !== 0 || !run.stdout) throw new Error(`depcruise failed (exit ${run.status}): ${run.stderr}`)
  return JSON.parse(run.stdout).summary.violations
}

/** Exactly as `npm run lint` runs it (the default "err" report): its exit status and what it printed. */
function depcruiseAsLint(dir: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [DEPCRUISE, '--config', CONFIG, '.'], { cwd: dir, encoding: 'utf8' })
  return { status: run.status, output: run.stdout + run.stderr }
}

const pairs = (vs: Violation[]) => vs.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort()

// The same small layout both times: spec and manifest rooms, the roller, the edge, the CLI, a test.
const CLEAN = {
  'iceberg/spec/types.ts': 'export type Id = number\nexport const first: Id = 1\n',
  'iceberg/manifest/manifest.ts': "import { first, type Id } from '../spec/types.ts'\nexport const next = (id: Id): Id => id + first\n",
  'roller/main.ts': "import { next } from '../iceberg/manifest/manifest.ts'\nexport const tick = () => next(1)\n",
  'edge/env.ts': 'export interface Env {\n  url: string\n}\n',
  'edge/index.ts':
    "import type { Env } from './env.ts'\nimport { first } from '../iceberg/spec/types.ts'\nexport const handle = (env: Env) => env.url + first\n",
  'cli/main.ts': "export const main = () => fetch('http://127.0.0.1/v1/sinks')\n",
  'dev/main.ts': "import { first } from '../iceberg/spec/types.ts'\nexport const port = 8787 + first\n",
  'test/roll.test.ts':
    "import { tick } from '../roller/main.ts'\nimport { handle } from '../edge/index.ts'\nexport const both = [tick(), handle({ url: '' })]\n",
}

describe('dependency rules (.dependency-cruiser.cjs)', () => {
  it('pass on a tree that keeps the doors', SLOW, () => {
    const dir = tree(CLEAN)
    expect(pairs(depcruise(dir))).toEqual([])
    expect(depcruiseAsLint(dir).status).toBe(0)
  })

  it('report a wrong-way import, an upward room import and a type-only cycle', SLOW, () => {
    const dir = tree({
      ...CLEAN,
      // wrong way: iceberg imports the roller
      'iceberg/x.ts': "import { y } from '../roller/y.ts'\nexport const x = y\n",
      'roller/y.ts': 'export const y = 1\n',
      // upward between rooms: spec may import no other room
      'iceberg/spec/uses-manifest.ts': "import { next } from '../manifest/manifest.ts'\nexport const two = next(1)\n",
      // a cycle made only of type imports (auth ↔ env)
      'edge/env.ts': "import type { Auth } from './auth.ts'\nexport interface Env {\n  url: string\n  auth?: Auth\n}\n",
      'edge/auth.ts': "import type { Env } from './env.ts'\nexport interface Auth {\n  env?: Env\n}\n",
    })
    const violations = depcruise(dir)
    const found = pairs(violations)
    expect(found).toContain('iceberg-imports-nothing-of-ours: iceberg/x.ts → roller/y.ts')
    expect(found).toContain('iceberg-room-spec: iceberg/spec/uses-manifest.ts → iceberg/manifest/manifest.ts')
    const cycles = violations.filter((v) => v.rule.name === 'no-circular')
    expect(cycles.length).toBeGreaterThan(0)
    for (const c of cycles) expect([c.from, c.to].sort()).toEqual(['edge/auth.ts', 'edge/env.ts'])
    expect(violations.every((v) => v.rule.severity === 'error')).toBe(true)
    const lint = depcruiseAsLint(dir)
    expect(lint.status).not.toBe(0)
    for (const rule of ['iceberg-imports-nothing-of-ours', 'iceberg-room-spec', 'no-circular']) expect(lint.output).toContain(rule)
  })

  it('keep writing out of the Worker bundle: it reads Avro and manifests through their reading files and iceberg/read/ only', SLOW, () => {
    const reading = {
      ...CLEAN,
      'iceberg/avro/decode.ts': 'export const decode = (b: number) => b\n',
      'iceberg/manifest/read-manifest.ts': "import { decode } from '../avro/decode.ts'\nexport const entries = () => decode(1)\n",
      'iceberg/read/live.ts': "import { entries } from '../manifest/read-manifest.ts'\nexport const live = () => entries()\n",
      'edge/index.ts': "import { live } from '../iceberg/read/live.ts'\nexport const handle = () => live()\n",
    }
    expect(pairs(depcruise(tree(reading)))).toEqual([])
    const found = pairs(
      depcruise(
        tree({
          ...reading,
          'iceberg/avro/encode.ts': 'export const encode = (b: number) => b\n',
          'iceberg/manifest/read-manifest.ts': "import { encode } from '../avro/encode.ts'\nexport const entries = () => encode(1)\n",
          'iceberg/read/live.ts':
            "import { entries } from '../manifest/read-manifest.ts'\nimport { next } from '../manifest/manifest.ts'\nexport const live = () => [entries(), next(1)]\n",
          'iceberg/writer/write.ts': "import { first } from '../spec/types.ts'\nexport const write = () => first\n",
          'iceberg/transaction/append.ts': "import { write } from '../writer/write.ts'\nexport const append = () => write()\n",
          'edge/routes.ts':
            "import { append } from '../iceberg/transaction/append.ts'\nimport { entries } from '../iceberg/manifest/read-manifest.ts'\nexport const r = [append, entries]\n",
          'edge/index.ts': "import { r } from './routes.ts'\nimport { live } from '../iceberg/read/live.ts'\nexport const handle = () => [r, live()]\n",
        }),
      ),
    )
    expect(found).toEqual(
      expect.arrayContaining([
        'edge-reads-manifests-only-through-iceberg-read: edge/routes.ts → iceberg/manifest/read-manifest.ts',
        'worker-bundle-writes-no-manifest-or-parquet: edge/index.ts → iceberg/avro/encode.ts',
        'worker-bundle-writes-no-manifest-or-parquet: edge/index.ts → iceberg/manifest/manifest.ts',
        'worker-bundle-writes-no-manifest-or-parquet: edge/index.ts → iceberg/transaction/append.ts',
      ]),
    )
  })

  it('keep edge and roller closed to everyone but themselves and the tests', SLOW, () => {
    const dir = tree({
      ...CLEAN,
      'cli/main.ts': "import { tick } from '../roller/main.ts'\nexport const main = tick\n",
      'dev/main.ts': "import { handle } from '../edge/index.ts'\nexport const port = handle({ url: '' })\n",
      'roller/main.ts': "import { handle } from '../edge/index.ts'\nexport const tick = () => handle({ url: '' })\n",
      'contract/layout.ts': "import { first } from '../iceberg/spec/types.ts'\nexport const prefix = '_sink/' + first\n",
    })
    const found = pairs(depcruise(dir))
    expect(found).toEqual(
      expect.arrayContaining([
        'cli-http-only: cli/main.ts → roller/main.ts',
        'nothing-imports-roller: cli/main.ts → roller/main.ts',
        'nothing-imports-edge: dev/main.ts → edge/index.ts',
        'nothing-imports-edge: roller/main.ts → edge/index.ts',
        'roller-doors: roller/main.ts → edge/index.ts',
        'contract-imports-nothing-of-ours: contract/layout.ts → iceberg/spec/types.ts',
      ]),
    )
  })
})

describe('Workers types (tsconfig.workers.json)', () => {
  it('load no Node types into the program of iceberg/, contract/ and edge/', SLOW, () => {
    const run = spawnSync(process.execPath, [TSC, '-p', join(ROOT, 'tsconfig.workers.json'), '--listFilesOnly'], { cwd: ROOT, encoding: 'utf8' })
    expect(run.status, run.stderr).toBe(0)
    const files = run.stdout.split('\n').filter(Boolean)
    expect(files.some((f) => f.endsWith('/edge/index.ts'))).toBe(true)
    expect(files.some((f) => f.includes('/@cloudflare/workers-types/'))).toBe(true)
    expect(files.filter((f) => f.includes('/@types/node/'))).toEqual([])
  })
})
