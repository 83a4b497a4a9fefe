// A real Iceberg REST catalog for the REST client's tests: Apache Iceberg's own REST fixture
// (RESTCatalogServer from iceberg-open-api's test fixtures, the code behind the
// iceberg-rest-fixture image) run as a plain Java process. Its jars come from Maven Central
// through `mvn dependency:copy-dependencies` on a pom generated here, cached under
// ~/.cache/lhbox/rest-catalog/<version>/lib (Maven's own repo in ~/.cache/lhbox/m2).
// Backend: JdbcCatalog on a SQLite file in the state folder; data and metadata in our S3
// (versitygw or s3rver) through Iceberg's S3FileIO.
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { S3Config } from '../iceberg/io/s3.ts'
import { dep, excl, mavenJars, pomOf } from './maven.ts'
import { startChild, waitFor, type Child } from './process.ts'

// 1.10.0, as the benches and tests measured it (1.11.0's test-fixtures jar is on Maven Central too,
// 1.12.0's is not); the other versions follow its gradle/libs.versions.toml (hadoop 3.4.1, jetty
// 11.0.26, sqlite-jdbc 3.50.3.0). The compatibility kit (test/support/iceberg-rck.ts) runs at it too.
export const REST_CATALOG_VERSION = '1.10.0'
const MAIN_CLASS = 'org.apache.iceberg.rest.RESTCatalogServer'

const ice = (artifact: string, extra = '') => dep('org.apache.iceberg', artifact, REST_CATALOG_VERSION, extra)

// hadoop-common is there for org.apache.hadoop.conf.Configuration only; the exclusions are
// those of iceberg's own build of the fixture's runtime jar.
export const HADOOP_EXCLUSIONS = [
  excl('org.slf4j'),
  excl('ch.qos.reload4j'),
  excl('org.apache.avro', 'avro'),
  excl('com.google.guava'),
  excl('com.google.protobuf'),
  excl('org.apache.curator'),
  excl('org.apache.zookeeper'),
  excl('org.apache.kerby'),
  excl('org.apache.hadoop.thirdparty', 'hadoop-shaded-protobuf_3_7'),
  excl('org.eclipse.jetty'),
  excl('com.google.re2j', 're2j'),
  excl('com.google.code.gson', 'gson'),
  excl('com.jcraft', 'jsch'),
  excl('com.google.code.findbugs', 'jsr305'),
  excl('io.dropwizard.metrics', 'metrics-core'),
  excl('dnsjava', 'dnsjava'),
  excl('org.xerial.snappy', 'snappy-java'),
  excl('commons-cli', 'commons-cli'),
  excl('com.github.pjfanning', 'jersey-json'),
].join('')

const POM = pomOf('rest-catalog', REST_CATALOG_VERSION, [
  ice('iceberg-open-api', '<classifier>test-fixtures</classifier>'),
  ice('iceberg-core', '<classifier>tests</classifier><exclusions>' + excl('*') + '</exclusions>'),
  ice('iceberg-core'),
  ice('iceberg-aws'),
  ice('iceberg-aws-bundle'),
  dep('org.apache.hadoop', 'hadoop-common', '3.4.1', `<exclusions>${HADOOP_EXCLUSIONS}</exclusions>`),
  dep('org.eclipse.jetty', 'jetty-servlet', '11.0.26'),
  dep('org.eclipse.jetty', 'jetty-server', '11.0.26'),
  dep('org.xerial', 'sqlite-jdbc', '3.50.3.0'),
  dep('org.slf4j', 'slf4j-api', '2.0.17'),
  dep('org.slf4j', 'slf4j-simple', '2.0.17'),
])

/** Fetches the fixture's jars once (needs `mvn` and Maven Central); returns the java arguments that run it. */
async function ensureRestCatalog(): Promise<string[]> {
  const lib = await mavenJars('rest-catalog', REST_CATALOG_VERSION, POM)
  return ['-cp', join(lib, '*'), MAIN_CLASS]
}

export interface RestCatalogServer {
  /** Base URI of the catalog: requests go to `${uri}/v1/...`. */
  uri: string
  child: Child
}

/**
 * Starts the REST catalog on `port` (it listens on all interfaces; use 127.0.0.1) with its log and
 * SQLite file in `stateDir`. `jvm`: the JVM's flags. By default tuned for a test's quick start (C1 only, a small heap); a bench
 * passes its own, as an operator would run the fixture (bench:catalog: the full JIT).
 */
export async function startRestCatalog(
  stateDir: string,
  port: number,
  s3: S3Config,
  warehouse = `s3://${s3.bucket}/rest`,
  jvm = ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Xss512k'],
): Promise<RestCatalogServer> {
  const javaArgs = await ensureRestCatalog()
  const dir = resolve(stateDir)
  mkdirSync(dir, { recursive: true })
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CATALOG_') && !k.startsWith('AWS_')) env[k] = v
  Object.assign(env, {
    // CATALOG_X__Y_Z becomes the catalog property x-y.z
    CATALOG_REST_PORT: String(port),
    CATALOG_URI: `jdbc:sqlite:${join(dir, 'rest-catalog.db')}`,
    CATALOG_WAREHOUSE: warehouse,
    CATALOG_IO__IMPL: 'org.apache.iceberg.aws.s3.S3FileIO',
    CATALOG_S3_ENDPOINT: s3.endpoint,
    CATALOG_S3_PATH__STYLE__ACCESS: 'true',
    CATALOG_S3_ACCESS__KEY__ID: s3.accessKeyId,
    CATALOG_S3_SECRET__ACCESS__KEY: s3.secretAccessKey,
    ...(s3.sessionToken ? { CATALOG_S3_SESSION__TOKEN: s3.sessionToken } : {}),
    CATALOG_CLIENT_REGION: s3.region,
    // loadTable/createTable answers carry s3.access-key-id/s3.secret-access-key in `config`
    CATALOG_INCLUDE__CREDENTIALS: 'true',
    AWS_REGION: s3.region,
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    AWS_EC2_METADATA_DISABLED: 'true',
    // no aws-chunked trailing checksums on uploads: s3rver refuses them
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
  })
  const child = startChild('rest-catalog', 'java', [...jvm, ...javaArgs], join(dir, 'rest-catalog.log'), { env, cwd: dir })
  const uri = `http://127.0.0.1:${port}`
  await waitFor('rest-catalog', async () => (await fetch(`${uri}/v1/config`)).ok, 90_000, child)
  return { uri, child }
}
