// Debian's chromium driven by playwright-core (no browser download): what the console's browser tests
// open. .ci/run installs the package when it is missing; LHBOX_CHROMIUM names another binary.
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser } from 'playwright-core'

const CHROMIUM = process.env.LHBOX_CHROMIUM ?? '/usr/bin/chromium'

/** A headless chromium (playwright gives each launch a fresh profile), fetching nothing beyond the pages it is sent to. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no chromium at ${CHROMIUM}: apt-get install chromium (.ci/run does), or set LHBOX_CHROMIUM`)
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}

/** Where the tests write their screenshots: LHBOX_SCREENSHOTS (the README's are docs/console), else beside the stack. */
export function screenshotDir(stackDir: string): string {
  const dir = process.env.LHBOX_SCREENSHOTS ?? join(stackDir, 'screenshots')
  mkdirSync(dir, { recursive: true })
  return dir
}
