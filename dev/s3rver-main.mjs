// Runs @20minutes/s3rver as the stack's S3 server (spawned with --openssl-legacy-provider:
// its list pagination crashes on Node 20 without it). Args: port directory bucket.
import S3rver from '@20minutes/s3rver'

const [port, directory, bucket] = process.argv.slice(2)
const server = new S3rver({ port: Number(port), address: '127.0.0.1', directory, silent: true, configureBuckets: [{ name: bucket }] })
// s3rver removes a key's folder once it is empty, and two deletes in one folder at once race on it
// (the second's readdir of the removed folder answers 500). Real stores have no folders: deletes
// are serialized here so the dev server behaves like one.
let deletes = Promise.resolve()
const deleteObject = server.store.deleteObject.bind(server.store)
server.store.deleteObject = (b, k) => {
  const next = deletes.then(() => deleteObject(b, k))
  deletes = next.catch(() => undefined)
  return next
}
await server.run()
process.stdout.write(`s3rver listening on ${port}\n`)
const stop = () => server.close().finally(() => process.exit(0))
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
