// Apache Iceberg's REST compatibility kit (RESTCompatibilityKitCatalogTests: CatalogTests from
// iceberg-core's tests jar run through a RESTCatalog) against a remote catalog, with the JUnit
// Platform console launcher, all in one JVM. Configured as apache/iceberg's open-api module reads it
// (RCKUtils, RESTServerExtension): rck.local=false (no local server); catalog properties from the
// system properties (uri, warehouse, credential, s3.*); rck.* switches read from those properties.
// The kit's jars are those of Iceberg 1.10.0 (REST_CATALOG_VERSION, the Apache REST fixture's), not
// 1.12.0's as the engine side (iceberg-java.ts): 1.12.0 publishes neither iceberg-core's tests jar
// nor iceberg-open-api on Maven Central. Fetched into ~/.cache/lhbox/iceberg-rck/<version>/lib.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { dep, excl, mavenJars, pomOf } from '../../dev/maven.ts'
import { HADOOP_EXCLUSIONS, REST_CATALOG_VERSION } from '../../dev/rest-catalog.ts'
import { runJvm } from './iceberg-java.ts'

const KIT = 'org.apache.iceberg.rest.RESTCompatibilityKitCatalogTests'

const ice = (artifact: string, extra = '') => dep('org.apache.iceberg', artifact, REST_CATALOG_VERSION, extra)
const alone = `<exclusions>${excl('*')}</exclusions>`

// Test-side versions are those of Iceberg 1.10.0's gradle/libs.versions.toml (junit 5.13.4, platform
// 1.13.4, assertj 3.27.4); the console launcher's standalone jar holds Jupiter and the platform.
const POM = pomOf('iceberg-rck', REST_CATALOG_VERSION, [
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
  dep('org.apache.hadoop', 'hadoop-mapreduce-client-core', '3.4.1', alone),
  dep('org.junit.platform', 'junit-platform-console-standalone', '1.13.4'),
  dep('org.assertj', 'assertj-core', '3.27.4'),
  dep('org.slf4j', 'slf4j-api', '2.0.17'),
  dep('org.slf4j', 'slf4j-simple', '2.0.17'),
])

export interface KitResult {
  /** The console launcher's summary counts: found, successful, failed, aborted (an assumption not met), skipped. */
  counts: Record<'found' | 'successful' | 'failed' | 'aborted' | 'skipped', number>
  /** Each failing test: its name and the first line of why. */
  failures: Array<{ test: string; why: string }>
  ms: number
  output: string
}

const xmlText = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')

export async function runCompatibilityKit(catalog: Record<string, string>, rck: Record<string, string> = {}): Promise<KitResult> {
  const reports = mkdtempSync(join(tmpdir(), 'lhbox-rck-'))
  try {
    const lib = await mavenJars('iceberg-rck', REST_CATALOG_VERSION, POM)
    const run = await runJvm(
      join(lib, '*'),
      'org.junit.platform.console.ConsoleLauncher',
      ['execute', '--select-class', KIT, '--disable-banner', '--details=summary', `--reports-dir=${reports}`],
      { props: { 'rck.local': 'false', ...rck, ...catalog }, timeoutMs: 10 * 60_000 },
    )
    const count = (what: string) => Number(new RegExp(`(\\d+) tests ${what}`).exec(run.stdout)?.[1] ?? Number.NaN)
    const counts = { found: count('found'), successful: count('successful'), failed: count('failed'), aborted: count('aborted'), skipped: count('skipped') }
    if (Number.isNaN(counts.found)) throw new Error(`the compatibility kit did not run (exit ${run.code}):\n${run.stdout}\n${run.stderr}`)
    const failures: KitResult['failures'] = []
    for (const file of readdirSync(reports).filter((f) => f.endsWith('.xml'))) {
      const xml = readFileSync(join(reports, file), 'utf8')
      for (const m of xml.matchAll(/<testcase name="([^"]*)"[^>]*>\s*<(failure|error) message="([^"]*)"/g)) {
        failures.push({ test: xmlText(m[1]), why: xmlText(m[3]).replace(/\s+/g, ' ').trim().slice(0, 200) })
      }
    }
    return { counts, failures, ms: run.ms, output: run.stdout + run.stderr }
  } finally {
    rmSync(reports, { recursive: true, force: true })
  }
}
