// The part of autocannon's API the benchmarks use (the package ships no types; @types/autocannon is
// not a dependency of this project).
declare module 'autocannon' {
  export interface Request {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string | Buffer
    setupRequest?: (req: Request, context: Record<string, unknown>) => Request | undefined
    onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void
  }
  export interface Options {
    url: string
    connections?: number
    duration?: number
    amount?: number
    timeout?: number
    pipelining?: number
    method?: string
    headers?: Record<string, string>
    body?: string | Buffer
    requests?: Request[]
    warmup?: { connections?: number; duration?: number }
    maxConnectionRequests?: number
    idReplacement?: boolean
  }
  export interface Histogram {
    average: number
    mean: number
    stddev: number
    min: number
    max: number
    p50: number
    p90: number
    p97_5: number
    p99: number
    [k: string]: number
  }
  export interface Result {
    requests: Histogram & { total: number; sent: number }
    latency: Histogram
    throughput: Histogram
    errors: number
    timeouts: number
    non2xx: number
    '2xx': number
    statusCodeStats: Record<string, { count: number }>
    duration: number
    start: Date
    finish: Date
  }
  export interface Instance extends Promise<Result> {
    stop(): void
  }
  function autocannon(opts: Options): Instance
  export default autocannon
}
