// warehouse-egress.test.ts again, against the edge on Node.
import { onEdgeHost } from '../../support/stack.ts'

onEdgeHost('node')
await import('../warehouse-egress.test.ts')
