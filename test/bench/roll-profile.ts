// bench:roll's --profile: the roller's .cpuprofile summed up — wall time by roll step, the top
// functions by self and inclusive time, self time by file.
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** The roll's step functions in roller/roll.ts, in order. */
const STEPS = ['reloadTable', 'reestablishInvariant', 'applyFirstRollChanges', 'readPendingBatches', 'validateRows', 'writeAndCommit', 'finishRoll']

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}

export function summarizeProfile(path: string): string[] {
  const prof = JSON.parse(readFileSync(path, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }
  const byId = new Map(prof.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const short = (url: string) => {
    if (!url) return ''
    const p = url.startsWith('file://') ? fileURLToPath(url) : url
    const r = relative(root, p)
    return r.startsWith('node_modules/') ? r.replace(/^node_modules\/((@[^/]+\/)?[^/]+)\/.*$/, '$1 (dep)') : r.startsWith('..') ? p : r
  }
  // tsx's transpiled modules report line 0 for everything: the file name alone then.
  const keyOf = (n: ProfileNode) =>
    `${n.callFrame.functionName || '(anonymous)'}  ${short(n.callFrame.url)}${n.callFrame.lineNumber > 0 ? `:${n.callFrame.lineNumber + 1}` : ''}`
  const self = new Map<string, number>()
  const inclusive = new Map<string, number>()
  const byFile = new Map<string, number>()
  let total = 0
  // The steps' wall-clock windows: when each step function is first seen on a sampled stack (the
  // steps run one after the other; time awaiting I/O inside a step falls in its window).
  const firstSeen = new Map<string, number>()
  let lastRollSeen = 0
  let at = prof.startTime
  prof.samples.forEach((id, i) => {
    const dt = prof.timeDeltas[i] ?? 0
    const node = byId.get(id)!
    total += dt
    at += dt
    for (let n: ProfileNode | undefined = node; n; n = byId.get(parent.get(n.id) ?? -1)) {
      const fn = n.callFrame.functionName
      if (!n.callFrame.url.includes('roller/roll.ts')) continue
      if (STEPS.includes(fn) && !firstSeen.has(fn)) firstSeen.set(fn, at)
      if (STEPS.includes(fn) || fn === 'roll') lastRollSeen = at
    }
    self.set(keyOf(node), (self.get(keyOf(node)) ?? 0) + dt)
    const file = short(node.callFrame.url) || node.callFrame.functionName
    byFile.set(file, (byFile.get(file) ?? 0) + dt)
    const seen = new Set<string>()
    for (let n: ProfileNode | undefined = node; n; n = byId.get(parent.get(n.id) ?? -1)) {
      const k = keyOf(n)
      if (seen.has(k)) continue
      seen.add(k)
      inclusive.set(k, (inclusive.get(k) ?? 0) + dt)
    }
  })
  const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1e6).toFixed(2).padStart(6)} s`
  const top = (m: Map<string, number>, n: number, filter: (k: string) => boolean = () => true) =>
    [...m]
      .filter(([k]) => filter(k))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `    ${pct(v)}  ${k}`)
  const marks = [
    ['start-up (modules, config, lease)', prof.startTime] as const,
    ...STEPS.filter((s) => firstSeen.has(s)).map((s) => [s, firstSeen.get(s)!] as const),
    ['after the roll (report logged, exit)', lastRollSeen] as const,
  ]
  const timeline = marks.map(([name, t], i) => {
    const end = i + 1 < marks.length ? marks[i + 1][1] : prof.endTime
    return `    ${((end - t) / 1e6).toFixed(2).padStart(6)} s  ${name}`
  })
  return [
    `  profile: ${(total / 1e6).toFixed(2)} s sampled (${path})`,
    '  wall time by step (windows between the steps’ first samples):',
    ...timeline,
    '  top self time:',
    ...top(self, 15),
    '  self time by file:',
    ...top(byFile, 10),
    '  inclusive time, the roll and the project code it calls:',
    ...top(inclusive, 20, (k) => /\s(roller|iceberg)\//.test(k)),
  ]
}
