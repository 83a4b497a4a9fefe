// What the REST catalog's S3 signer agrees to sign (edge/iceberg-rest/sign-scope.ts): objects under the
// table's location at the warehouse's store, reads only for a read key; every way out refused.
import { describe, expect, it } from 'vitest'
import { type Access, checkSignRequest, locationScope } from '../../../edge/iceberg-rest/sign-scope.ts'

const STORE = 'http://127.0.0.1:9000'
const LOCATION = 's3://lake/wh/ns/events'
const T = `${STORE}/lake/wh/ns/events`

const check =
  (access: Access, method: string, uri: string, headers: Record<string, string[]> = {}) =>
  () =>
    checkSignRequest({ endpoint: STORE, location: LOCATION, access }, method, uri, headers)

describe('checkSignRequest', () => {
  it('signs reads of the table’s files for a read key, and writes for a write key', () => {
    expect(check('read', 'GET', `${T}/metadata/00001-a.metadata.json`)).not.toThrow()
    expect(check('read', 'HEAD', `${T}/data/x=1/f%20g.parquet?x-id=HeadObject`)).not.toThrow()
    expect(check('write', 'PUT', `${T}/data/00000-0.parquet`)).not.toThrow()
    expect(check('write', 'POST', `${T}/data/big.parquet?uploads`)).not.toThrow()
    expect(check('write', 'PUT', `${T}/data/big.parquet?partNumber=2&uploadId=abc`)).not.toThrow()
    expect(check('write', 'DELETE', `${T}/data/old.parquet`)).not.toThrow()
    // Virtual-hosted addressing names the bucket in the host.
    expect(check('read', 'GET', 'http://lake.127.0.0.1:9000/wh/ns/events/metadata/m.json')).not.toThrow()
    // A listing under the table (s3fs tells a missing file from a folder so).
    expect(check('read', 'GET', `${STORE}/lake?list-type=2&prefix=wh%2Fns%2Fevents%2Fdata%2F&delimiter=%2F&max-keys=1`)).not.toThrow()
  })

  it('refuses writes for a read key', () => {
    for (const method of ['PUT', 'POST', 'DELETE']) expect(check('read', method, `${T}/data/f.parquet`)).toThrow(/read key/)
    expect(check('read', 'PATCH', `${T}/data/f.parquet`)).toThrow()
  })

  it('refuses what lies outside the table: another table, bucket, store; dot segments, encoded slashes', () => {
    expect(check('write', 'GET', `${STORE}/lake/wh/ns/events2/data/f.parquet`)).toThrow(/outside/)
    expect(check('write', 'GET', `${STORE}/lake/wh/ns/other/metadata/m.json`)).toThrow(/outside/)
    expect(check('write', 'GET', `${STORE}/other/wh/ns/events/data/f.parquet`)).toThrow(/another bucket/)
    expect(check('write', 'GET', `http://127.0.0.1:9001/lake/wh/ns/events/data/f`)).toThrow(/store/)
    expect(check('write', 'GET', `https://127.0.0.1:9000/lake/wh/ns/events/data/f`)).toThrow(/store/)
    expect(check('write', 'GET', `http://evil.example/lake/wh/ns/events/data/f`)).toThrow(/store/)
    expect(check('write', 'GET', `${T}/../other/metadata/m.json`)).toThrow(/dot segment/)
    expect(check('write', 'GET', `${T}/%2e%2e/other/m.json`)).toThrow(/dot segment/)
    expect(check('write', 'GET', `${T}/data/..%2F..%2Fother`)).toThrow(/encoded slash/)
    expect(check('write', 'GET', `${T}/data\\..\\x`)).toThrow(/backslash/)
    expect(check('write', 'GET', `${T}/%zz`)).toThrow(/decode/)
    expect(check('write', 'GET', `${STORE}/lake/wh/ns/events`)).toThrow(/outside/)
    expect(check('read', 'GET', `${STORE}/lake?list-type=2&prefix=wh%2Fns%2F`)).toThrow(/prefix/)
    expect(check('read', 'GET', `${STORE}/lake`)).toThrow(/bucket itself/)
    expect(check('write', 'POST', `${STORE}/lake?delete`)).toThrow(/bucket itself/)
    expect(check('write', 'PUT', `${T}/data/f?acl`)).toThrow(/query/)
    expect(check('write', 'PUT', `${T}/data/f`, { 'x-amz-copy-source': ['lake/wh/ns/other/data/f'] })).toThrow(/copies/)
    expect(check('write', 'PUT', `${T}/data/f`, { 'X-Amz-Acl': ['public-read'] })).toThrow(/ACL/)
    expect(check('write', 'PUT', `${T}/data/f`, { 'x-amz-grant-read': ['uri=http://acs.amazonaws.com/groups/global/AllUsers'] })).toThrow(/ACL/)
    expect(check('write', 'PUT', `${T}/data/f`, { 'x-amz-checksum-crc32': ['AAAAAA=='], 'content-md5': ['x'] })).not.toThrow()
    expect(check('write', 'GET', 'file:///etc/passwd')).toThrow()
  })

  it('reads an s3 location as its bucket and key prefix', () => {
    expect(locationScope('s3://lake/wh/ns/events/')).toEqual({ bucket: 'lake', prefix: 'wh/ns/events/' })
    expect(locationScope('gs://lake/x')).toBeNull()
  })
})
