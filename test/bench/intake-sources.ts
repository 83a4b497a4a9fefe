// bench:intake's guard against a rebuild: wrangler dev watches the Worker's sources and rebuilds and
// restarts it when one changes (here others edit the same working tree while a bench runs). A run
// during which a source changed measured esbuild and a cold isolate, not the route: it is run again.
import { readdirSync, type Stats, statSync } from 'node:fs'
import { join } from 'node:path'

/** The folders and files the edge Worker and the bare Worker are built from. */
const SOURCES = ['edge', 'iceberg', 'contract', 'db', 'test/bench/bare-worker', 'wrangler.toml', 'package.json']

/** The newest modification time and the number of files under the Worker's sources, as one text. */
export function sourcesStamp(root: string): string {
  let newest = 0
  let files = 0
  const walk = (path: string) => {
    let st: Stats
    try {
      st = statSync(path)
    } catch {
      return
    }
    if (st.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name))
    else {
      files++
      newest = Math.max(newest, st.mtimeMs)
    }
  }
  for (const s of SOURCES) walk(join(root, s))
  return `${newest}/${files}`
}
