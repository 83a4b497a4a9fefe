// POST /internal/keys (bootstrap secret): creates the project if needed and answers an API key once.
import * as v from 'valibot'
import { Hono } from 'hono'
import { eq } from 'drizzle-orm'
import { apiKeys, projects } from '../../db/schema.ts'
import { requireBootstrap } from '../auth.ts'
import type { AppEnv } from '../env.ts'
import { LEVELS, newKey, randomHex, sha256Hex } from '../keys.ts'
import { jsonBody, text } from '../validate.ts'

export const CreateKey = v.object({
  project: v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'a project name is 1–63 chars of a-z 0-9 _ -')),
  level: v.picklist(LEVELS),
  name: v.optional(v.pipe(text(), v.maxLength(200))),
})

export const keys = new Hono<AppEnv>().post('/internal/keys', requireBootstrap, async (c) => {
  const body = await jsonBody(c, CreateKey)
  const db = await c.var.db()
  await db
    .insert(projects)
    .values({ id: `prj_${randomHex(8)}`, name: body.project })
    .onConflictDoNothing({ target: projects.name })
  const [project] = await db.select().from(projects).where(eq(projects.name, body.project))
  const { key, id } = newKey('key')
  await db.insert(apiKeys).values({ id, projectId: project.id, level: body.level, keySha256: await sha256Hex(key), name: body.name })
  return c.json({ key, key_id: id, level: body.level, project: project.name, project_id: project.id }, 201)
})
