// The REST catalog's request bodies (the REST OpenAPI spec's CreateNamespaceRequest,
// UpdateNamespacePropertiesRequest, CreateTableRequest, CommitTableRequest, RenameTableRequest), as
// valibot schemas over losslessly parsed JSON: every number arrives as a LosslessNumber and leaves
// as the number the metadata model holds (ids, counters and timestamps as numbers; snapshot ids,
// sequence numbers and row ids as bigint, exact). An unknown update or requirement fails the
// variant: 400, as the spec requires. Unknown members elsewhere are kept (forward compatibility).
import * as v from 'valibot'
import { isLosslessNumber, type LosslessNumber } from '../../iceberg/spec/json.ts'
import type { TableRequirement, TableUpdate } from '../../iceberg/spec/updates.ts'
import { record, text } from '../validate.ts'

const Num = v.custom<LosslessNumber>(isLosslessNumber, 'expected a number')
const Int = v.pipe(
  Num,
  v.transform((n) => Number(n.value)),
  v.safeInteger('expected an integer'),
)
const LONG_MAX = 2n ** 63n - 1n
const Long = v.pipe(
  Num,
  v.check((n) => /^-?\d{1,19}$/.test(n.value), 'expected an integer'),
  v.transform((n) => BigInt(n.value)),
  v.check((n) => n <= LONG_MAX && n >= -LONG_MAX - 1n, 'expected a 64-bit integer'),
)
/** An optional member that some clients send as null: absent either way. */
const opt = <S extends v.GenericSchema>(s: S) =>
  v.pipe(
    v.nullish(s),
    v.transform((x) => x ?? undefined),
  )
const Name = v.pipe(text(), v.minLength(1, 'expected a non-empty name'), v.maxLength(255, 'at most 255 characters'))
const Properties = record(v.pipe(text(), v.maxLength(255)), v.pipe(text(), v.maxLength(1000)))
const Location = v.pipe(text(), v.minLength(1), v.maxLength(800, 'a location of at most 800 characters'))

// ---------- types and schemas ----------

const Type: v.GenericSchema<unknown, any> = v.lazy(() => v.union([v.string(), Struct, List, MapType], 'expected an Iceberg type'))
const Field = v.looseObject({ id: Int, name: Name, type: Type, required: v.boolean(), doc: opt(v.string()) })
const Struct = v.looseObject({ type: v.literal('struct'), fields: v.array(Field) })
const List = v.looseObject({ type: v.literal('list'), 'element-id': Int, element: Type, 'element-required': v.boolean() })
const MapType = v.looseObject({ type: v.literal('map'), 'key-id': Int, key: Type, 'value-id': Int, value: Type, 'value-required': v.boolean() })

const SchemaJson = v.pipe(
  v.looseObject({
    type: v.optional(v.literal('struct')),
    'schema-id': opt(Int),
    'identifier-field-ids': opt(v.array(Int)),
    fields: v.array(Field),
  }),
  v.transform((s) => ({ ...s, type: 'struct' as const, 'schema-id': s['schema-id'] ?? 0 })),
)

const PartitionFieldJson = v.looseObject({ 'source-id': Int, 'field-id': opt(Int), name: Name, transform: text(), 'source-ids': opt(v.array(Int)) })
const PartitionSpecJson = v.looseObject({ 'spec-id': opt(Int), fields: v.array(PartitionFieldJson) })

const SortFieldJson = v.looseObject({
  'source-id': Int,
  transform: text(),
  direction: v.picklist(['asc', 'desc']),
  'null-order': v.picklist(['nulls-first', 'nulls-last']),
})
const SortOrderJson = v.looseObject({ 'order-id': opt(Int), fields: v.array(SortFieldJson) })

const SnapshotJson = v.looseObject({
  'snapshot-id': Long,
  'parent-snapshot-id': opt(Long),
  'sequence-number': opt(Long),
  'timestamp-ms': Int,
  'manifest-list': opt(Location),
  manifests: opt(v.array(text())),
  summary: v.pipe(
    record(text(), v.string()),
    v.check((s) => typeof s.operation === 'string', 'summary.operation is required'),
  ),
  'schema-id': opt(Int),
  'first-row-id': opt(Long),
  'added-rows': opt(Long),
})

// ---------- updates and requirements ----------

const update = <A extends string, E extends v.ObjectEntries>(action: A, entries: E) => v.looseObject({ action: v.literal(action), ...entries })

const Update = v.variant(
  'action',
  [
    update('assign-uuid', { uuid: v.pipe(v.string(), v.uuid()) }),
    update('upgrade-format-version', { 'format-version': v.pipe(Int, v.picklist([2, 3], 'format-version 2 or 3')) }),
    update('add-schema', { schema: SchemaJson, 'last-column-id': opt(Int) }),
    update('set-current-schema', { 'schema-id': Int }),
    update('add-spec', {
      spec: v.pipe(
        PartitionSpecJson,
        v.transform((s) => ({ ...s, 'spec-id': s['spec-id'] ?? -1, fields: s.fields.map((f) => ({ ...f, 'field-id': f['field-id'] ?? -1 })) })),
      ),
    }),
    update('set-default-spec', { 'spec-id': Int }),
    update('add-sort-order', {
      'sort-order': v.pipe(
        SortOrderJson,
        v.transform((o) => ({ ...o, 'order-id': o['order-id'] ?? -1 })),
      ),
    }),
    update('set-default-sort-order', { 'sort-order-id': Int }),
    update('add-snapshot', { snapshot: SnapshotJson }),
    update('set-snapshot-ref', {
      'ref-name': Name,
      type: v.picklist(['branch', 'tag']),
      'snapshot-id': Long,
      'max-ref-age-ms': opt(Int),
      'max-snapshot-age-ms': opt(Int),
      'min-snapshots-to-keep': opt(Int),
    }),
    update('remove-snapshots', { 'snapshot-ids': v.array(Long) }),
    update('remove-snapshot-ref', { 'ref-name': Name }),
    update('set-location', { location: Location }),
    update('set-properties', { updates: Properties }),
    update('remove-properties', { removals: v.array(text()) }),
    update('remove-schemas', { 'schema-ids': v.array(Int) }),
    update('remove-partition-specs', { 'spec-ids': v.array(Int) }),
  ],
  'an update this catalog does not know (action)',
)

const requirement = <T extends string, E extends v.ObjectEntries>(type: T, entries: E) => v.looseObject({ type: v.literal(type), ...entries })

const Requirement = v.variant(
  'type',
  [
    requirement('assert-create', {}),
    requirement('assert-table-uuid', { uuid: v.string() }),
    requirement('assert-ref-snapshot-id', {
      ref: Name,
      'snapshot-id': v.pipe(
        v.nullish(Long),
        v.transform((x) => x ?? null),
      ),
    }),
    requirement('assert-last-assigned-field-id', { 'last-assigned-field-id': Int }),
    requirement('assert-current-schema-id', { 'current-schema-id': Int }),
    requirement('assert-last-assigned-partition-id', { 'last-assigned-partition-id': Int }),
    requirement('assert-default-spec-id', { 'default-spec-id': Int }),
    requirement('assert-default-sort-order-id', { 'default-sort-order-id': Int }),
  ],
  'a requirement this catalog does not know (type)',
)

// ---------- request bodies ----------

/** A namespace: its levels, each non-empty and without a dot (the SQL catalog joins levels with dots). */
export const Namespace = v.pipe(
  v.array(v.pipe(Name, v.regex(/^[^.]+$/, 'a namespace level may not contain a dot'))),
  v.minLength(1, 'a namespace has at least one level'),
  v.check((n) => n.join('.').length <= 255, 'a namespace of at most 255 characters'),
)

const TableIdentifierJson = v.object({ namespace: Namespace, name: Name })

export const CreateNamespaceRequest = v.object({ namespace: Namespace, properties: v.optional(Properties, {}) })

export const UpdateNamespacePropertiesRequest = v.object({
  removals: v.optional(v.array(v.pipe(text(), v.maxLength(255))), []),
  updates: v.optional(Properties, {}),
})

export const CreateTableRequest = v.object({
  name: Name,
  location: opt(Location),
  schema: SchemaJson,
  'partition-spec': opt(PartitionSpecJson),
  'write-order': opt(SortOrderJson),
  'stage-create': v.optional(v.boolean(), false),
  properties: v.optional(Properties, {}),
})

export const CommitTableRequest = v.object({
  identifier: v.optional(TableIdentifierJson),
  requirements: v.array(Requirement),
  updates: v.array(Update),
})

/** transactions/commit: every change names its table; one table once. */
export const CommitTransactionRequest = v.object({
  'table-changes': v.pipe(
    v.array(v.object({ ...CommitTableRequest.entries, identifier: TableIdentifierJson })),
    v.minLength(1, 'at least one table change'),
    v.maxLength(100, 'at most 100 table changes'),
    v.check((c) => new Set(c.map((x) => [...x.identifier.namespace, x.identifier.name].join('\x1f'))).size === c.length, 'a table appears twice'),
  ),
})

export const RenameTableRequest = v.object({ source: TableIdentifierJson, destination: TableIdentifierJson })

/** register: a table named at a metadata file already written; overwrite replaces a table of that name. */
export const RegisterTableRequest = v.object({
  name: Name,
  'metadata-location': Location,
  overwrite: v.optional(v.boolean(), false),
})

/** The parsed commit in the catalog's own vocabulary (the shapes above are checked member by member). */
export function commitOf(body: v.InferOutput<typeof CommitTableRequest>): { requirements: TableRequirement[]; updates: TableUpdate[] } {
  return { requirements: body.requirements as TableRequirement[], updates: body.updates as unknown as TableUpdate[] }
}
