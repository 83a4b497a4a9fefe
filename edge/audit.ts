// The audit log: sink.create, sink.delete, sink.roll, …
import { auditEvents } from '../db/schema.ts'
import type { EdgeDb } from '../db/edge.ts'

export async function audit(
  db: EdgeDb,
  e: { projectId: string; actor: string; action: string; subject: string; details?: Record<string, unknown> },
): Promise<void> {
  await db.insert(auditEvents).values({ projectId: e.projectId, actor: e.actor, action: e.action, subject: e.subject, details: e.details ?? null })
}
