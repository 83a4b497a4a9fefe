// Bounded concurrency for the roll's reads: a few batches read ahead of the one being validated.

/** Loads items a few ahead of the one being consumed, in order. */
export async function* prefetch<T, R>(items: T[], depth: number, load: (item: T) => Promise<R>): AsyncGenerator<R> {
  const inflight: Promise<R>[] = []
  let next = 0
  const start = () => {
    const p = load(items[next++])
    p.catch(() => undefined) // awaited below, in order; this only keeps Node from calling it unhandled
    inflight.push(p)
  }
  while (next < items.length && inflight.length < depth) start()
  while (inflight.length > 0) {
    const result = await inflight.shift()!
    if (next < items.length) start()
    yield result
  }
}
