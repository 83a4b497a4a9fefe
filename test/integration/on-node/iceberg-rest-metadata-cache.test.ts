// iceberg-rest-metadata-cache.test.ts again, against the edge on Node.
import { onEdgeHost } from '../../support/stack.ts'

onEdgeHost('node')
await import('../iceberg-rest-metadata-cache.test.ts')
