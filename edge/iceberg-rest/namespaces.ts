// The REST catalog's namespace routes over the SQL catalog's namespaces (iceberg/catalog/sql-namespaces.ts).
import type { Context } from 'hono'
import * as v from 'valibot'
import type { AppEnv } from '../env.ts'
import { need } from './auth.ts'
import { answer, readBody } from './body.ts'
import { badRequest, IcebergError } from './errors.ts'
import { CreateNamespaceRequest, Namespace, UpdateNamespacePropertiesRequest } from './schemas.ts'
import { catalogAt } from './warehouse.ts'

/** A namespace as a path or a query names it: levels joined by the unit separator (%1F). 400 for an impossible one. */
export function namespaceParam(raw: string | undefined): string[] {
  const levels = (raw ?? '').split('\x1f')
  const result = v.safeParse(Namespace, levels)
  if (!result.success) throw badRequest(`namespace: ${result.issues[0].message}`)
  return result.output
}

export async function listNamespaces(c: Context<AppEnv>) {
  const parent = c.req.query('parent')
  const catalog = await catalogAt(c)
  const namespaces = await catalog.namespaces.children(parent ? namespaceParam(parent) : [])
  return answer(c, { namespaces })
}

export async function createNamespace(c: Context<AppEnv>) {
  need(c, 'write')
  const body = await readBody(c, CreateNamespaceRequest)
  const catalog = await catalogAt(c)
  await catalog.namespaces.create(body.namespace, body.properties)
  return answer(c, { namespace: body.namespace, properties: await catalog.namespaces.properties(body.namespace) })
}

/** GET: the namespace and its properties; HEAD (Hono serves it with the GET route): 204 when it exists. */
export async function loadNamespace(c: Context<AppEnv>) {
  const namespace = namespaceParam(c.req.param('namespace'))
  const catalog = await catalogAt(c)
  if (c.req.method === 'HEAD') {
    if (!(await catalog.namespaces.exists(namespace)))
      throw new IcebergError(404, 'NoSuchNamespaceException', `Namespace does not exist: ${namespace.join('.')}`)
    return c.body(null, 204)
  }
  return answer(c, { namespace, properties: await catalog.namespaces.properties(namespace) })
}

export async function dropNamespace(c: Context<AppEnv>) {
  need(c, 'write')
  const namespace = namespaceParam(c.req.param('namespace'))
  const catalog = await catalogAt(c)
  await catalog.namespaces.drop(namespace)
  return c.body(null, 204)
}

export async function updateNamespaceProperties(c: Context<AppEnv>) {
  need(c, 'write')
  const namespace = namespaceParam(c.req.param('namespace'))
  const body = await readBody(c, UpdateNamespacePropertiesRequest)
  const both = body.removals.filter((k) => k in body.updates)
  if (both.length > 0) throw new IcebergError(422, 'UnprocessableEntityException', `a key both removed and updated: ${both.join(', ')}`)
  const catalog = await catalogAt(c)
  return answer(c, await catalog.namespaces.update(namespace, body.removals, body.updates))
}
