// A sink's device settings as this isolate last saw them. The ledger statement checks the digest on
// every request (edge/ledger.ts), so a stale entry costs one more statement, never a wrongly mapped row.
import type { Compiled, MappingInput } from './compile.ts'
import type { Pointer, Require } from './types.ts'

/** What sinks.device holds. */
export interface DeviceSettings {
  mapping: MappingInput | null
  require: Require | null
  strip: Pointer[] | null
  compiled: Compiled | null
}

interface Seen {
  version: string
  settings: DeviceSettings | null
}

const MAX = 1000
const seen = new Map<string, Seen>()

export function lastSeen(sinkId: string): Seen | undefined {
  return seen.get(sinkId)
}

export function remember(sinkId: string, entry: Seen): void {
  seen.delete(sinkId)
  seen.set(sinkId, entry)
  // A Map iterates in insertion order: the first key is the one seen longest ago.
  if (seen.size > MAX) seen.delete(seen.keys().next().value as string)
}
