// The catalog and stores of a sink's warehouse, as the roller reaches them.
import pg from 'pg'
import type { WarehouseView } from '../contract/internal.ts'
import { CatalogUnauthorized, type Catalog } from '../iceberg/catalog/index.ts'
import { MetadataCache } from '../iceberg/catalog/metadata-cache.ts'
import { RestCatalog } from '../iceberg/catalog/rest.ts'
import { SqlCatalog } from '../iceberg/catalog/sql.ts'
import { S3FileIO } from '../iceberg/io/file-io.ts'
import type { S3Client } from '../iceberg/io/s3.ts'
import type { RollerConfig } from './config.ts'
import type { Logger } from './log.ts'
import type { RollRequests } from './requests.ts'

// Each store request is tried up to four times (S3Config.retries says which): a busy store's 503 or
// a dropped connection costs a moment, not the sink's roll and a tick's wait.
const STORE_RETRIES = 3

export class Warehouses {
  private pool: pg.Pool | undefined
  /** Every SQL-catalog table's metadata read or written by this roller, by location: a roll reads its table's again only when it moved. */
  private readonly metadata = new MetadataCache()

  constructor(
    private readonly config: RollerConfig,
    private readonly log: Logger,
  ) {}

  /**
   * The SQL catalogs' connections, named after this roller in pg_stat_activity. An idle connection
   * the server drops (a restart, a failover, pg_terminate_backend) emits 'error' on the pool: without
   * a listener that kills the process. The pool discards that client; the next query opens another.
   */
  private sqlPool(url: string): pg.Pool {
    if (this.pool) return this.pool
    // A connection for each roll slot: concurrent rolls' commits do not queue for one.
    this.pool = new pg.Pool({
      connectionString: url,
      max: Math.max(4, this.config.concurrency),
      application_name: `lhbox-roller ${this.config.rollerId}`.slice(0, 63),
    })
    this.pool.on('error', (err) => this.log.warn('an idle catalog connection was dropped', { error: err.message }))
    return this.pool
  }

  /**
   * The warehouse's catalog. A REST catalog signs in with the warehouse's own token or credential (the
   * edge hands them over with the lease), else with LHBOX_CATALOG_TOKEN / LHBOX_CATALOG_CREDENTIAL.
   */
  catalog({ warehouse: w }: { warehouse: WarehouseView }, requests?: RollRequests): Catalog {
    if (w.catalog.type === 'sql') {
      if (!this.config.databaseUrl) throw new Error('DATABASE_URL is needed for SQL-catalog warehouses')
      const pool = this.sqlPool(this.config.databaseUrl)
      return new SqlCatalog({
        name: w.catalog.catalog_name,
        sql: requests ? requests.sql(pool) : pool,
        warehouseLocation: w.location,
        io: this.io({ warehouse: w }, requests),
        cache: this.metadata,
      })
    }
    if (w.catalog.secret_error) throw new CatalogUnauthorized(`the edge cannot open this warehouse's catalog secret: ${w.catalog.secret_error}`)
    const own = w.catalog.token !== undefined || w.catalog.credential !== undefined
    return new RestCatalog({
      name: w.name,
      uri: w.catalog.uri,
      warehouse: w.catalog.warehouse,
      scope: w.catalog.scope,
      token: own ? w.catalog.token : this.config.catalogToken,
      credential: own ? w.catalog.credential : this.config.catalogCredential,
      s3: {
        endpoint: w.endpoint,
        region: w.region,
        accessKeyId: this.config.s3AccessKeyId,
        secretAccessKey: this.config.s3SecretAccessKey,
        retries: STORE_RETRIES,
        observe: requests?.observer('s3'),
      },
      ...(requests ? { fetch: requests.fetch('catalog') } : {}),
    })
  }

  /** `requests`: a roll's counts, which each request adds to. */
  io({ warehouse: w }: { warehouse: WarehouseView }, requests?: RollRequests): S3FileIO {
    return new S3FileIO({
      endpoint: w.endpoint,
      region: w.region,
      accessKeyId: this.config.s3AccessKeyId,
      secretAccessKey: this.config.s3SecretAccessKey,
      retries: STORE_RETRIES,
      observe: requests?.observer('s3'),
    })
  }

  /** The warehouse bucket, where the intake, the rejects and the markers live. */
  bucket(at: { warehouse: WarehouseView }, requests?: RollRequests): S3Client {
    return this.io(at, requests).client(at.warehouse.bucket)
  }

  async close(): Promise<void> {
    await this.pool?.end()
  }
}
