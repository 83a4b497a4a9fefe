// The edge's S3 client for a warehouse's bucket, signed as the catalog's own identity.
import { S3Client } from '../iceberg/io/s3.ts'
import type { Env } from './env.ts'

export function bucketClient(env: Env, where: { bucket?: string; endpoint?: string; region?: string } = {}): S3Client {
  return new S3Client({
    endpoint: where.endpoint ?? env.S3_ENDPOINT,
    bucket: where.bucket ?? env.S3_BUCKET,
    region: where.region ?? env.S3_REGION,
    accessKeyId: env.S3_ACCESS_KEY_ID,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY,
  })
}
