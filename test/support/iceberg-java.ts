// Apache Iceberg Java against the edge's REST catalog (issue 28): the jars of Iceberg's RESTCatalog,
// its generic reader, and its own catalog test suite (CatalogTests in iceberg-core's tests jar, the
// REST compatibility kit in iceberg-open-api's tests jar) with the JUnit console launcher, fetched by
// dev/maven.ts at the version of the Apache REST fixture (dev/rest-catalog.ts); our Java sources in
// test/java compiled with javac into ~/.cache/lhbox/iceberg-java-classes/<hash of the sources>.
import { execFile, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { dep, excl, mavenJars, pomOf } from '../../dev/maven.ts'
import { HADOOP_EXCLUSIONS, REST_CATALOG_VERSION } from '../../dev/rest-catalog.ts'
import { CACHE_DIR } from '../../dev/s3.ts'

const run = promisify(execFile)

/** A JDK's tool: JAVA_HOME's when set (the machine's default Java otherwise). */
const jdk = (tool: 'java' | 'javac') => (process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', tool) : tool)

const ice = (artifact: string, extra = '') => dep('org.apache.iceberg', artifact, REST_CATALOG_VERSION, extra)
const alone = `<exclusions>${excl('*')}</exclusions>`

// Test-side versions are those of Iceberg 1.10.0's gradle/libs.versions.toml (junit 5.13.4, platform
// 1.13.4, assertj 3.27.4); the console launcher's standalone jar holds Jupiter and the platform.
const POM = pomOf('iceberg-java', REST_CATALOG_VERSION, [
  ice('iceberg-core'),
  ice('iceberg-data'),
  ice('iceberg-parquet'),
  ice('iceberg-aws'),
  ice('iceberg-aws-bundle'),
  ice('iceberg-core', `<classifier>tests</classifier>${alone}`),
  ice('iceberg-api', `<classifier>tests</classifier>${alone}`),
  ice('iceberg-open-api', `<classifier>test-fixtures</classifier>${alone}`),
  ice('iceberg-open-api', `<classifier>tests</classifier>${alone}`),
  dep('org.apache.hadoop', 'hadoop-common', '3.4.1', `<exclusions>${HADOOP_EXCLUSIONS}</exclusions>`),
  // Parquet's read options name FileInputFormat (the reader never uses it): that one jar, alone.
  dep('org.apache.hadoop', 'hadoop-mapreduce-client-core', '3.4.1', alone),
  dep('org.junit.platform', 'junit-platform-console-standalone', '1.13.4'),
  dep('org.assertj', 'assertj-core', '3.27.4'),
  dep('org.slf4j', 'slf4j-api', '2.0.17'),
  dep('org.slf4j', 'slf4j-simple', '2.0.17'),
])

const SOURCES = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'java')

function javaFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? javaFiles(join(dir, e.name)) : e.name.endsWith('.java') ? [join(dir, e.name)] : [],
  )
}

let built: Promise<string> | undefined

/** The classpath of the jars and our compiled classes (fetched and compiled on first use). */
function javaClasspath(): Promise<string> {
  built ??= build().catch((err) => {
    built = undefined
    throw err
  })
  return built
}

async function build(): Promise<string> {
  const lib = await mavenJars('iceberg-java', REST_CATALOG_VERSION, POM)
  const files = javaFiles(SOURCES).sort()
  const hash = createHash('sha256')
  hash.update(POM)
  for (const f of files) hash.update(f.slice(SOURCES.length)).update('\0').update(readFileSync(f)).update('\0')
  const classes = join(CACHE_DIR, 'iceberg-java-classes', hash.digest('hex').slice(0, 16))
  const classpath = `${classes}:${join(lib, '*')}`
  if (existsSync(classes)) return classpath
  const tmp = `${classes}.${process.pid}`
  rmSync(tmp, { recursive: true, force: true })
  mkdirSync(tmp, { recursive: true })
  try {
    await run(jdk('javac'), ['-nowarn', '-encoding', 'UTF-8', '--release', '17', '-cp', join(lib, '*'), '-d', tmp, ...files], { maxBuffer: 1 << 24 })
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string }
    rmSync(tmp, { recursive: true, force: true })
    throw new Error(`javac of test/java failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`)
  }
  rmSync(classes, { recursive: true, force: true })
  renameSync(tmp, classes)
  return classpath
}

export interface JavaRun {
  code: number | null
  stdout: string
  stderr: string
  ms: number
}

/** Runs `main` (a class of test/java or of the jars) in one JVM; `-D` properties first. */
export async function runJava(
  main: string,
  args: string[],
  opts: { props?: Record<string, string>; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<JavaRun> {
  const classpath = await javaClasspath()
  const props = Object.entries(opts.props ?? {}).map(([k, v]) => `-D${k}=${v}`)
  // A small heap and the client compiler: these runs are short, and the box is shared.
  const jvm = ['-Xmx512m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn']
  const started = Date.now()
  return new Promise((res, rej) => {
    const child = spawn(jdk('java'), [...jvm, ...props, '-cp', classpath, main, ...args], {
      // The AWS SDK's aws-chunked trailing checksums on uploads are refused by s3rver (dev/rest-catalog.ts does the same).
      env: {
        ...process.env,
        AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
        AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
        AWS_EC2_METADATA_DISABLED: 'true',
        ...opts.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const out: Buffer[] = []
    const err: Buffer[] = []
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000)
    child.stdout.on('data', (b: Buffer) => out.push(b))
    child.stderr.on('data', (b: Buffer) => err.push(b))
    child.on('error', (e) => {
      clearTimeout(timer)
      rej(e)
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      res({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), ms: Date.now() - started })
    })
  })
}
