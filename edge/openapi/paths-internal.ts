import {
  FeedBatch,
  FeedBatchRecorded,
  LagList,
  LeaseRenewal,
  LeaseRenewed,
  MeasureList,
  MeasureQuery,
  RollAnswer,
  RollReport,
  SinkList,
  SinksQuery,
  StorageReport,
} from '../../contract/internal.ts'
import { CreateKey } from '../routes/keys.ts'
import { API_KEY_CREATED, object, queryParams, schema } from './shapes.ts'

import { type Operation, LEASE_SECONDS } from './operation.ts'

export const INTERNAL_PATHS: Record<string, Record<string, Operation>> = {
  '/healthz': {
    get: {
      summary: 'The database and the bucket answer',
      auth: null,
      statuses: { 200: 'Healthy', 503: 'unavailable: not ready (failed names which)' },
      answers: { 200: object({ ok: { const: true }, database: { const: 'ok' }, bucket: { const: 'ok' } }) },
    },
  },
  '/internal/keys': {
    post: {
      summary: 'Create an API key (and its project)',
      auth: 'bootstrap',
      body: CreateKey,
      statuses: { 201: 'The key, shown once' },
      answers: { 201: API_KEY_CREATED },
    },
  },
  '/internal/sinks': {
    get: {
      summary: 'The roller’s view; ?roller=&lease_seconds= leases the due sinks',
      auth: 'bootstrap',
      params: queryParams(SinksQuery, { lease_seconds: LEASE_SECONDS, limit: { type: 'integer', minimum: 1, maximum: 10000 } }),
      statuses: { 200: 'Sinks' },
      answers: { 200: schema(SinkList) },
    },
  },
  '/internal/lag': {
    get: {
      summary: 'Every sink’s lag for the roller’s gauges: waiting batches, the oldest’s arrival, roll_seconds, due, held',
      auth: 'bootstrap',
      statuses: { 200: 'Lags' },
      answers: { 200: schema(LagList) },
    },
  },
  '/internal/leases': {
    post: {
      summary: 'Renews the leases a roller’s rolls still need; answers those it still holds',
      auth: 'bootstrap',
      body: LeaseRenewal,
      statuses: { 200: 'Renewed' },
      answers: { 200: schema(LeaseRenewed) },
    },
  },
  '/internal/sinks/{sink_id}/batches': {
    post: {
      summary: 'A feed run’s stored batch, pending in the ledger (lag shows it); only the lease holder may record one',
      auth: 'bootstrap',
      path: { sink_id: { type: 'string' } },
      body: FeedBatch,
      statuses: { 200: 'Recorded (false: the ledger had it)', 409: 'lease_lost: the sink is not leased by this roller' },
      answers: { 200: schema(FeedBatchRecorded) },
    },
  },
  '/internal/sinks/{sink_id}/roll': {
    post: {
      summary: 'The roller’s report',
      auth: 'bootstrap',
      path: { sink_id: { type: 'string' } },
      body: RollReport,
      statuses: { 200: 'Recorded', 404: 'sink_not_found' },
      answers: { 200: schema(RollAnswer) },
    },
  },
  '/internal/warehouses/measure': {
    get: {
      summary: 'The storage meter’s lease: the warehouses whose figure is due (every_seconds) or asked for',
      auth: 'bootstrap',
      params: queryParams(MeasureQuery, {
        every_seconds: { type: 'integer', minimum: 0, maximum: 86400, default: 300 },
        lease_seconds: LEASE_SECONDS,
      }),
      statuses: { 200: 'Warehouses' },
      answers: { 200: schema(MeasureList) },
    },
  },
  '/internal/warehouses/{warehouse_id}/storage': {
    post: {
      summary: 'The storage meter’s figure',
      auth: 'bootstrap',
      path: { warehouse_id: { type: 'string' } },
      body: StorageReport,
      statuses: { 200: 'Recorded', 404: 'warehouse_not_found' },
      answers: { 200: object({ ok: { const: true } }) },
    },
  },
}
