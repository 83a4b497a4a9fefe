// rate-limits.test.ts again, against the edge on Node.
import { onEdgeHost } from '../../support/stack.ts'

onEdgeHost('node')
await import('../rate-limits.test.ts')
