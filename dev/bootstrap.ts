// First-run setup through the API itself: a default project, an admin key, a default warehouse.
// A restart reuses the key saved in dev.env while it still works.
export interface Bootstrapped {
  apiKey: string
  warehouse: string
}

async function call(url: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
  const headers = new Headers(init.headers)
  if (init.json !== undefined) headers.set('content-type', 'application/json')
  return fetch(url, { ...init, headers, body: init.json === undefined ? undefined : JSON.stringify(init.json) })
}

export async function bootstrap(apiUrl: string, secret: string, savedKey?: string, warehouse = 'default'): Promise<Bootstrapped> {
  let apiKey = savedKey
  if (!apiKey || (await call(`${apiUrl}/v1/warehouses`, { headers: { authorization: `Bearer ${apiKey}` } })).status !== 200) {
    const res = await call(`${apiUrl}/internal/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}` },
      json: { project: 'default', level: 'admin', name: 'dev' },
    })
    if (res.status !== 201) throw new Error(`bootstrap: POST /internal/keys answered ${res.status} ${await res.text()}`)
    apiKey = ((await res.json()) as { key: string }).key
  }
  const auth = { authorization: `Bearer ${apiKey}` }
  const list = (await (await call(`${apiUrl}/v1/warehouses`, { headers: auth })).json()) as { warehouses: { name: string }[] }
  if (!list.warehouses.some((w) => w.name === warehouse)) {
    const res = await call(`${apiUrl}/v1/warehouses`, { method: 'POST', headers: auth, json: { name: warehouse, catalog: { type: 'sql' } } })
    if (res.status !== 201) throw new Error(`bootstrap: POST /v1/warehouses answered ${res.status} ${await res.text()}`)
  }
  return { apiKey, warehouse }
}
