// What warehouses.catalog_secret seals (db/sealed.ts), and the `auth` kept in clear beside it in
// warehouses.catalog, so a warehouse can say how it signs in without opening the secret.

/** A REST catalog's credentials: a bearer token, or OAuth2 client credentials `client_id:client_secret`. */
export interface CatalogSecret {
  token?: string
  credential?: string
}

export type CatalogAuth = 'bearer' | 'oauth2' | 'none'

/** How the edge and the roller sign in to a REST catalog with this secret. */
export function catalogAuth(secret: { token?: unknown; credential?: unknown }): CatalogAuth {
  return secret.credential ? 'oauth2' : secret.token ? 'bearer' : 'none'
}

/** What warehouses.store_read_key's seal is bound to: its row, and that it is the read-only store pair. */
export const storeReadKeyBinding = (warehouseId: string) => `${warehouseId}:store-read-key`
