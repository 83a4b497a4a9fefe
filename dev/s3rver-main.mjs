// Runs @20minutes/s3rver as the stack's S3 server (spawned with --openssl-legacy-provider:
// its list pagination crashes on Node 20 without it). Args: port directory bucket.
import S3rver from '@20minutes/s3rver'

const [port, directory, bucket] = process.argv.slice(2)
const server = new S3rver({ port: Number(port), address: '127.0.0.1', directory, silent: true, configureBuckets: [{ name: bucket }] })
await server.run()
process.stdout.write(`s3rver listening on ${port}\n`)
const stop = () => server.close().finally(() => process.exit(0))
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
