// The one-way doors (../shared/DESIGN.md, "Target layout" and "Doors"), checked by `npm run lint`
// and proved by test/unit/lint-rules.test.ts:
//   cli → HTTP only · edge → contract, iceberg, db · roller → contract, iceberg (+ HTTP to edge)
//   iceberg, contract → nothing of ours · nothing imports edge or roller but itself and the tests
//   iceberg's rooms form the DAG below · no cycles anywhere, type-only imports included.
//
// Paths are relative to the folder depcruise runs in (the repository root).

// iceberg/ room → the rooms it may import directly (only these edges; no transitive shortcuts).
// Adding an edge here is a design decision: it must keep the graph acyclic and point downwards.
const ROOMS = {
  spec: [],
  io: [],
  avro: [],
  manifest: ['avro', 'spec'],
  parquet: ['spec'],
  ingest: ['parquet', 'spec'],
  writer: ['manifest', 'parquet', 'spec'],
  catalog: ['io', 'spec'],
  read: ['catalog', 'manifest', 'parquet', 'spec'],
  transaction: ['catalog', 'io', 'manifest', 'read', 'spec'],
  maintenance: ['catalog', 'io', 'manifest', 'parquet', 'read', 'spec', 'transaction'],
}

// The rooms' graph must stay a DAG: a room-level cycle fails here, before any file is read.
for (const start of Object.keys(ROOMS)) {
  const seen = new Set()
  const walk = (room, path) => {
    for (const next of ROOMS[room] ?? []) {
      if (next === start) throw new Error(`.dependency-cruiser.cjs: iceberg rooms form a cycle: ${[...path, next].join(' → ')}`)
      if (seen.has(next)) continue
      seen.add(next)
      walk(next, [...path, next])
    }
  }
  walk(start, [start])
}

const NPM = ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-bundled', 'npm-no-pkg', 'npm-unknown']
// Type declarations that TypeScript finds but enhanced-resolve cannot reach through the package's
// "exports" map (hyparquet-writer maps ./src/*.js to ./types/*.d.ts; its types live in src/types.d.ts).
const TYPES_ONLY_PACKAGE_PATHS = ['^hyparquet-writer/src/types\\.js$']
const roomNames = Object.keys(ROOMS).join('|')

const roomRules = Object.entries(ROOMS).map(([room, allowed]) => ({
  name: `iceberg-room-${room}`,
  comment: `iceberg/${room}/ may import ${allowed.map((r) => `iceberg/${r}/`).join(', ') || 'no other room'} (ROOMS in .dependency-cruiser.cjs).`,
  severity: 'error',
  from: { path: `^iceberg/${room}/` },
  to: { path: '^iceberg/', pathNot: `^iceberg/(${[room, ...allowed].join('|')})/` },
}))

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles anywhere; type-only imports count (tsPreCompilationDeps).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'worker-bundle-writes-no-manifest-or-parquet',
      comment:
        'The Worker bundle (edge/index.ts and what it reaches) holds no code that writes a data file, a manifest or Avro (DESIGN.md, Doors): ' +
        'no writer/ or maintenance/, no transaction/ file but transact.ts and changes.ts (metadata-only commits), no Parquet encoder, no Avro ' +
        "encoder and no manifest writer. It may read: the table sample (GET /v1/tables/{…}/sample, the console's table page) reads the " +
        'manifest list and manifests to find the newest data file, through iceberg/read/ and the reading-only files of avro/ and manifest/.',
      severity: 'error',
      from: { path: '^edge/index\\.ts$' },
      to: {
        path: [
          '^iceberg/(writer|maintenance)/',
          '^iceberg/transaction/(?!(transact|changes)\\.ts$)',
          // Avro and manifests: the decoders only, never encode.ts, write-container.ts, schemas.ts, list.ts or manifest.ts.
          '^iceberg/avro/(?!(schema|decode|container|read-container)\\.ts$)',
          '^iceberg/manifest/(?!(field-ids|read-list|read-manifest)\\.ts$)',
          '^iceberg/parquet/(write|data-file|flat|plain|delta|rle|general|zstd)\\.ts$',
          // Node's S3 transport (undici, node:crypto): Node entry points install it, the Worker sends with fetch.
          '^iceberg/io/s3-node\\.ts$',
        ],
        reachable: true,
      },
    },
    {
      name: 'edge-reads-manifests-only-through-iceberg-read',
      comment: 'The edge reaches Avro and manifests only through iceberg/read/ (reading), never by importing them itself.',
      severity: 'error',
      from: { path: '^edge/' },
      to: { path: '^iceberg/(avro|manifest)/' },
    },
    {
      name: 'iceberg-imports-nothing-of-ours',
      comment: 'iceberg/ is a runtime-neutral library: it imports npm packages and itself, nothing else of ours.',
      severity: 'error',
      from: { path: '^iceberg/' },
      to: { pathNot: ['^iceberg/', ...TYPES_ONLY_PACKAGE_PATHS], dependencyTypesNot: [...NPM, 'core'] },
    },
    {
      name: 'contract-imports-nothing-of-ours',
      comment: 'contract/ is what edge and roller agree on: it imports npm packages (valibot) and itself, nothing else of ours.',
      severity: 'error',
      from: { path: '^contract/' },
      to: { pathNot: '^contract/', dependencyTypesNot: [...NPM, 'core'] },
    },
    {
      name: 'nothing-imports-edge',
      comment: 'Only edge/ itself and the tests import edge/ (the Worker is reached over HTTP).',
      severity: 'error',
      from: { pathNot: '^(edge|test)/' },
      to: { path: '^edge/' },
    },
    {
      name: 'nothing-imports-roller',
      comment: 'Only roller/ itself and the tests import roller/ (dev/ starts it as a process).',
      severity: 'error',
      from: { pathNot: '^(roller|test)/' },
      to: { path: '^roller/' },
    },
    {
      name: 'cli-http-only',
      comment: 'cli/ talks to the edge over HTTP only: it imports npm packages and itself, nothing else of ours.',
      severity: 'error',
      from: { path: '^cli/' },
      to: { pathNot: '^cli/', dependencyTypesNot: [...NPM, 'core'] },
    },
    {
      name: 'edge-doors',
      comment: 'edge/ imports contract/, iceberg/ and db/ of ours, nothing else.',
      severity: 'error',
      from: { path: '^edge/' },
      to: { pathNot: '^(edge|contract|iceberg|db)/', dependencyTypesNot: [...NPM, 'core'] },
    },
    {
      name: 'roller-doors',
      comment: 'roller/ imports contract/ and iceberg/ of ours, nothing else (the edge only over HTTP).',
      severity: 'error',
      from: { path: '^roller/' },
      to: { pathNot: '^(roller|contract|iceberg)/', dependencyTypesNot: [...NPM, 'core'] },
    },
    {
      name: 'db-imports-nothing-of-ours',
      comment: 'db/ (schema, migrations, client factories) imports npm packages and itself only.',
      severity: 'error',
      from: { path: '^db/' },
      to: { pathNot: '^db/', dependencyTypesNot: [...NPM, 'core'] },
    },
    {
      name: 'iceberg-top-level-is-index-only',
      comment: `iceberg/ has rooms (${roomNames}) and index.ts at its top; a new room needs its edges in ROOMS.`,
      severity: 'error',
      from: { path: '^iceberg/', pathNot: `^iceberg/((${roomNames})/|index\\.ts$)` },
      to: { path: '^iceberg/' },
    },
    {
      name: 'iceberg-rooms-do-not-import-index',
      comment: 'iceberg/index.ts is the door for callers outside iceberg/; the rooms import each other directly.',
      severity: 'error',
      from: { path: `^iceberg/(${roomNames})/` },
      to: { path: '^iceberg/index\\.ts$' },
    },
    ...roomRules,
    {
      name: 'shipped-code-not-to-dev-deps',
      comment: 'The roller image installs with --omit=dev and wrangler bundles the edge: shipped code imports no devDependency at run time.',
      severity: 'error',
      from: { path: '^(edge|roller|iceberg|contract|db|cli)/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every import resolves (a typo would slip past every rule above).',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true, pathNot: TYPES_ONLY_PACKAGE_PATHS },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|\\.scratch|\\.wrangler|\\.lhbox|\\.git)/' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
}
