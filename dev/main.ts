// npm run dev: the whole local stack in one command. State in LHBOX_DEV_DIR (default .lhbox),
// ports from LHBOX_DEV_PORT (default 8780) upward; Ctrl-C / SIGTERM stops every child.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { randomBytes } from 'node:crypto'
import { bootstrap } from './bootstrap.ts'
import { newSecretsKey, startStack } from './stack.ts'

const dir = resolve(process.env.LHBOX_DEV_DIR ?? '.lhbox')
const basePort = Number(process.env.LHBOX_DEV_PORT ?? 8780)
const envFile = join(dir, 'dev.env')

function readEnvFile(): Record<string, string> {
  if (!existsSync(envFile)) return {}
  const out: Record<string, string> = {}
  for (const line of readFileSync(envFile, 'utf8').split('\n')) {
    const m = /^(?:export\s+)?([A-Z0-9_]+)=(.*)$/.exec(line.trim())
    if (m) out[m[1]] = m[2].replace(/^'(.*)'$/, '$1')
  }
  return out
}

const saved = readEnvFile()
const secret = saved.LHBOX_BOOTSTRAP_SECRET ?? randomBytes(24).toString('base64url')
const secretsKey = saved.LHBOX_SECRETS_KEY ?? newSecretsKey()
const started = Date.now()
console.log(`lhbox dev stack in ${dir}`)
const stack = await startStack({ dir, basePort, bootstrapSecret: secret, secretsKey, roller: true, log: (l) => console.log(`  ${l}`) })

let stopping = false
async function shutdown(signal: string) {
  if (stopping) return
  stopping = true
  console.log(`\n${signal}: stopping the stack…`)
  await stack.stop()
  process.exit(0)
}
process.on('SIGINT', () => void shutdown('SIGINT'))
process.on('SIGTERM', () => void shutdown('SIGTERM'))

try {
  const { apiKey, warehouse } = await bootstrap(stack.apiUrl, secret, saved.LHBOX_API_KEY)
  const values: Record<string, string> = {
    LHBOX_URL: stack.apiUrl,
    LHBOX_API_KEY: apiKey,
    LHBOX_WAREHOUSE: warehouse,
    LHBOX_BOOTSTRAP_SECRET: secret,
    LHBOX_SECRETS_KEY: secretsKey,
    DATABASE_URL: stack.databaseUrl,
    S3_ENDPOINT: stack.s3.endpoint,
    S3_BUCKET: stack.s3.bucket,
    S3_REGION: stack.s3.region,
    S3_ACCESS_KEY_ID: stack.s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: stack.s3.secretAccessKey,
  }
  writeFileSync(
    envFile,
    Object.entries(values)
      .map(([k, v]) => `export ${k}='${v}'`)
      .join('\n') + '\n',
    { mode: 0o600 },
  )
  console.log(`\nready in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  console.log(`  LHBOX_URL=${stack.apiUrl}`)
  console.log(`  LHBOX_API_KEY=${apiKey}   (admin, project "default")`)
  console.log(`  LHBOX_WAREHOUSE=${warehouse}`)
  console.log(`\n  console: ${stack.apiUrl}/console    # sign in with the LHBOX_API_KEY above`)
  console.log(`\n  source ${envFile}    # then: npx lhbox warehouse list`)
  console.log('  Ctrl-C stops everything; the data stays for the next start.')
} catch (err) {
  console.error(String((err as Error).message ?? err))
  await stack.stop()
  process.exit(1)
}
