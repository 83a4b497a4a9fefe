// databaseFailure: a database that dropped or refused the connection is a 503 the producer retries,
// never a 500; any other database error stays a logged 500.
import { describe, expect, it } from 'vitest'
import { databaseFailure } from '../../../edge/errors.ts'

const pgError = (message: string, code?: string) => Object.assign(new Error(message), code ? { code, severity: 'FATAL' } : {})

describe('databaseFailure', () => {
  it('answers 503 unavailable, failed: ["database"], Retry-After for a connection that broke', () => {
    for (const err of [
      pgError('terminating connection due to administrator command', '57P01'),
      pgError('the database system is shutting down', '57P02'),
      pgError('the database system is starting up', '57P03'),
      pgError('sorry, too many clients already', '53300'),
      pgError('connection failure', '08006'),
      pgError('could not serialize access due to concurrent update', '40001'),
      new Error('Connection terminated unexpectedly'),
      new Error('Client has encountered a connection error and is not queryable'),
      // drizzle wraps the driver's error in its own
      new Error('Failed query: insert into batches …', { cause: pgError('terminating connection due to administrator command', '57P01') }),
    ]) {
      const api = databaseFailure(err)
      expect(api, err.message).toBeDefined()
      expect([api!.status, api!.code, api!.details, api!.headers]).toEqual([503, 'unavailable', { failed: ['database'] }, { 'Retry-After': '5' }])
    }
  })

  it('leaves any other error alone (a bad query is a 500 for the operator to see)', () => {
    for (const err of [
      pgError('relation "nope" does not exist', '42P01'),
      pgError('duplicate key value', '23505'),
      new TypeError('x is undefined'),
      'a string',
      null,
    ]) {
      expect(databaseFailure(err)).toBeUndefined()
    }
  })
})
