// FileIO: read and write table files by location (s3://bucket/key), through the project's S3 client.
import { S3Client, type S3Config } from './s3.ts'

export interface FileIO {
  read(location: string): Promise<Uint8Array>
  write(location: string, bytes: Uint8Array | string, contentType?: string): Promise<void>
  delete(locations: string[]): Promise<void>
}

export class FileNotFound extends Error {
  constructor(readonly location: string) {
    super(`file not found: ${location}`)
    this.name = 'FileNotFound'
  }
}

export function parseS3Location(location: string): { bucket: string; key: string } {
  const m = /^s3a?:\/\/([^/]+)\/(.+)$/.exec(location)
  if (!m) throw new Error(`not an s3:// location: ${location}`)
  return { bucket: m[1], key: m[2] }
}

/** S3 locations in any bucket of one endpoint, signed with one identity (the catalog's, or vended). */
export class S3FileIO implements FileIO {
  private readonly clients = new Map<string, S3Client>()

  constructor(private readonly base: Omit<S3Config, 'bucket'>) {}

  client(bucket: string): S3Client {
    let c = this.clients.get(bucket)
    if (!c) {
      c = new S3Client({ ...this.base, bucket })
      this.clients.set(bucket, c)
    }
    return c
  }

  async read(location: string): Promise<Uint8Array> {
    const { bucket, key } = parseS3Location(location)
    const got = await this.client(bucket).get(key)
    if (!got) throw new FileNotFound(location)
    return got.body
  }

  async write(location: string, bytes: Uint8Array | string, contentType?: string): Promise<void> {
    const { bucket, key } = parseS3Location(location)
    await this.client(bucket).put(key, bytes, { contentType })
  }

  async delete(locations: string[]): Promise<void> {
    const byBucket = new Map<string, string[]>()
    for (const loc of locations) {
      const { bucket, key } = parseS3Location(loc)
      byBucket.set(bucket, [...(byBucket.get(bucket) ?? []), key])
    }
    for (const [bucket, keys] of byBucket) await this.client(bucket).deleteMany(keys)
  }
}
