// What the Worker uses of node-postgres' Client (pg-client.js says why this is declared here).
export declare class Client {
  constructor(config: { connectionString: string })
  connect(): Promise<void>
  end(): Promise<void>
  on(event: 'error', listener: (err: Error) => void): this
}
