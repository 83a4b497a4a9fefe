// Apache Iceberg Java against the edge's REST catalog (issue 28): the jars of Iceberg 1.12's
// RESTCatalog, S3FileIO and generic Parquet reader and writer, fetched by dev/maven.ts into
// ~/.cache/lhbox/iceberg-java/<version>/lib; our Java sources in test/java compiled with javac into
// ~/.cache/lhbox/iceberg-java-classes/<hash of the pom and the sources>. The compatibility kit has
// jars of its own version (test/support/iceberg-rck.ts) and shares only the JVM runner here.
import { execFile, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { dep, excl, mavenJars, pomOf } from '../../dev/maven.ts'
import { HADOOP_EXCLUSIONS } from '../../dev/rest-catalog.ts'
import { CACHE_DIR } from '../../dev/s3.ts'

const run = promisify(execFile)

/** The Iceberg Java release the engine side runs (the issue asks for 1.12's RESTCatalog). */
const ICEBERG_JAVA_VERSION = '1.12.0'

/** A JDK's tool: JAVA_HOME's when set (the machine's default Java otherwise; 1.12's jars need 17). */
const jdk = (tool: 'java' | 'javac') => (process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', tool) : tool)

const ice = (artifact: string) => dep('org.apache.iceberg', artifact, ICEBERG_JAVA_VERSION)
const alone = `<exclusions>${excl('*')}</exclusions>`

// Other versions follow apache/iceberg's gradle/libs.versions.toml at 1.12 (hadoop 3.4.3, slf4j 2.0.18).
const POM = pomOf('iceberg-java', ICEBERG_JAVA_VERSION, [
  ice('iceberg-core'),
  ice('iceberg-data'),
  ice('iceberg-parquet'),
  ice('iceberg-aws'),
  ice('iceberg-aws-bundle'),
  dep('org.apache.hadoop', 'hadoop-common', '3.4.3', `<exclusions>${HADOOP_EXCLUSIONS}</exclusions>`),
  // Parquet's read options name FileInputFormat (the reader never uses it): that one jar, alone.
  dep('org.apache.hadoop', 'hadoop-mapreduce-client-core', '3.4.3', alone),
  dep('org.slf4j', 'slf4j-api', '2.0.18'),
  dep('org.slf4j', 'slf4j-simple', '2.0.18'),
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
  const lib = await mavenJars('iceberg-java', ICEBERG_JAVA_VERSION, POM)
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

export interface JavaOptions {
  props?: Record<string, string>
  env?: Record<string, string>
  timeoutMs?: number
}

/** Runs `main` (a class of test/java or of the 1.12 jars) in one JVM; `-D` properties first. */
export async function runJava(main: string, args: string[], opts: JavaOptions = {}): Promise<JavaRun> {
  return runJvm(await javaClasspath(), main, args, opts)
}

/** Runs `main` on `classpath` in one JVM. */
export function runJvm(classpath: string, main: string, args: string[], opts: JavaOptions = {}): Promise<JavaRun> {
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
