// The console as a person uses it (issue 16), in headless chromium: a wrong key is refused; the key
// signs in and stays out of the URL; the overview shows the project's sinks and their lag; after a
// roll the lag is gone, the roll is in the history, the rejected rows are there with their reasons,
// the table shows its sample rows; a read key sees no actions; a write key acts after confirming,
// rotates a send key (shown once) and retires the previous one.
// Each page's screenshot is written (test/support/browser.ts) for the README.
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium, screenshotDir } from '../support/browser.ts'
import { tickInProcess } from '../support/roller.ts'
import { newProject, newSink, send, type Sink } from '../support/sinks.ts'
import { call, newApiKey, stack } from '../support/stack.ts'

// The page's globals, for the callbacks playwright runs in the page (this program has no DOM types).
declare const document: any, location: any, navigator: any, sessionStorage: any

let browser: Browser
let owner: { project: string; key: string; warehouse: string }
let sink: Sink
let keyed: Sink
let shots: string

const COLUMNS = [
  { name: 'x', type: 'long', required: true, doc: 'how many' },
  { name: 'who', type: 'string' },
]
// Two good rows (one a long past 2^53) and three bad ones, twice.
const BATCH = '[{"x":9007199254740993,"who":"north"},{"x":"seven"},{"who":"no x"},{"x":2,"extra":true},{"x":3}]'

beforeAll(async () => {
  owner = await newProject()
  // An hour's roll_seconds: the stack's roller service leaves them be, so the lag stays until the test rolls.
  const opts = (sink: Record<string, unknown>) => ({
    tableSpec: { warehouse: owner.warehouse, namespace: 'console_ui', columns: COLUMNS },
    sink: { warehouse: owner.warehouse, roll_seconds: 3600, ...sink },
  })
  sink = await newSink(owner.key, opts({}))
  keyed = await newSink(owner.key, opts({ key: ['x'] }))
  browser = await launchChromium()
  shots = screenshotDir(stack().dir)
}, 120_000)

afterAll(async () => {
  await browser?.close()
  for (const s of [sink, keyed]) if (s) await call(`/v1/sinks/${s.id}`, { key: owner.key, method: 'DELETE' })
})

const consoleUrl = () => `${stack().apiUrl}/console`

/** A fresh tab (its own sessionStorage) at 1280 px, or a phone's width; failures of the page fail the test. */
async function tab(width = 1280): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 } })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack().apiUrl })
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(e.message))
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text())
  })
  ;(page as Page & { errors: string[] }).errors = errors
  return page
}

const errorsOf = (page: Page) => (page as Page & { errors: string[] }).errors

async function signIn(page: Page, key: string): Promise<void> {
  await page.goto(consoleUrl())
  await page.fill('#sign-in input[name=key]', key)
  await page.click('#sign-in button[type=submit]')
}

async function go(page: Page, hash: string, ready: string): Promise<void> {
  await page.evaluate((h) => {
    location.hash = h
  }, hash)
  await page.waitForSelector(ready)
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true })

const cells = (page: Page, selector: string) =>
  page.$$eval(selector, (rows) => rows.map((r) => Array.from(r.querySelectorAll('td'), (td: { textContent: string | null }) => td.textContent?.trim() ?? '')))

describe('signing in', () => {
  it('refuses a wrong key and keeps nothing of it', async () => {
    const page = await tab()
    await signIn(page, 'al_key_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')
    await page.waitForSelector('#sign-in-error:not([hidden])')
    expect(await page.textContent('#sign-in-error')).toMatch(/valid API key.*\(unauthorized\)/)
    expect(await page.isVisible('#nav')).toBe(false)
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0)
    await shot(page, 'sign-in-refused')
    expect(errorsOf(page).filter((e) => !/401/.test(e))).toEqual([])
  })
})

describe('an operator’s morning', () => {
  let page: Page

  it('signs in with the key and sees the project’s sinks, with what waits', async () => {
    expect((await send(sink, BATCH, { batchId: 'morning-1' })).status).toBe(202)
    expect((await send(sink, BATCH, { batchId: 'morning-2' })).status).toBe(202)
    page = await tab()
    await signIn(page, owner.key)
    await page.waitForSelector(`tr[data-sink="${sink.id}"]`)
    expect(page.url()).not.toContain(owner.key)
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([owner.key])
    const rows = await cells(page, '#sinks tbody tr')
    expect(rows.map((r) => r[0]).sort()).toEqual([sink.name, keyed.name].sort())
    const row = (await cells(page, `tr[data-sink="${sink.id}"]`))[0]
    expect(row[1]).toBe(`${owner.warehouse}.${sink.table}`)
    expect(row[2]).toBe('active')
    expect(row[3]).toMatch(/^2 · \d+ B$/)
    expect(row[5]).toBe('never')
    await shot(page, 'overview-waiting')
  })

  it('after a roll: nothing waits, the roll is in the history, the rejects have their reasons', async () => {
    const tick = await tickInProcess({ sink: sink.id })
    expect(tick.code, tick.stdout).toBe(0)
    await page.reload()
    await page.waitForSelector(`tr[data-sink="${sink.id}"]`)
    const row = (await cells(page, `tr[data-sink="${sink.id}"]`))[0]
    expect(row[3]).toBe('0 · 0 B')
    expect(row[5]).toMatch(/ago · 4 rows$/)
    expect(row[6]).toBe('6')
    await shot(page, 'overview')

    await page.click(`tr[data-sink="${sink.id}"] a[href="#/sinks/${sink.id}"]`)
    await page.waitForSelector('#rolls')
    const [roll] = await cells(page, '#rolls tbody tr')
    expect(roll.slice(1, 4)).toEqual(['2', '4', '6'])
    expect(roll[4]).toMatch(/^\d{1,19}$/)
    expect(await page.textContent('#sink-lag')).toContain('0 batches')
    expect(await page.textContent('#curl')).toContain(`/v1/sinks/${sink.id}`)
    await shot(page, 'sink')

    await page.click('#rejects-link')
    await page.waitForSelector('#rejects')
    const rejects = await cells(page, '#rejects tbody tr')
    expect(rejects.map((r) => [r[0], r[1], r[2], r[3]])).toEqual([
      ['morning-1', '1', 'type_mismatch', 'x'],
      ['morning-1', '2', 'missing_required', 'x'],
      ['morning-1', '3', 'unknown_field', 'extra'],
      ['morning-2', '1', 'type_mismatch', 'x'],
      ['morning-2', '2', 'missing_required', 'x'],
      ['morning-2', '3', 'unknown_field', 'extra'],
    ])
    // The producer's row as it was sent.
    expect(rejects[0][6]).toBe('{"x":"seven"}')
    await shot(page, 'rejects')

    await page.selectOption('#rejects-filter select[name=reason]', 'unknown_field')
    await page.click('#rejects-filter button[type=submit]')
    await page.waitForFunction(() => document.querySelectorAll('#rejects tbody tr').length === 2)
    expect(page.url()).toContain('reason=unknown_field')
    expect((await cells(page, '#rejects tbody tr')).map((r) => r[6])).toEqual(['{"x":2,"extra":true}', '{"x":2,"extra":true}'])

    await page.click('#copy-duckdb')
    await page.waitForSelector('#copy-duckdb.copied')
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
      `SELECT * FROM read_json('s3://${stack().s3.bucket}/_sink/${sink.id}/rejects/*.ndjson', format = 'newline_delimited');`,
    )
  })

  it('shows the table: schema with docs, the snapshot with its batches, and sample rows', async () => {
    await go(page, `#/tables/${owner.warehouse}.${sink.table}`, '#schema')
    expect((await cells(page, '#schema tbody tr')).map((r) => [r[1], r[2], r[4]])).toEqual([
      ['x', 'long', 'how many'],
      ['who', 'string', 'undocumented'],
      ['__ingest_ts', 'timestamptz', expect.stringContaining('received')],
    ])
    const [snapshot] = await cells(page, '#snapshots tbody tr')
    expect(snapshot[2]).toBe('append')
    expect(snapshot[5]).toBe(`${sink.id}: morning-1, morning-2`)
    const sample = await page.$$eval('#sample li code', (els) => els.map((e) => e.textContent))
    expect(sample).toHaveLength(4)
    expect(sample[0]).toContain('"x":9007199254740993')
    await shot(page, 'table')
  })

  it('shows usage: this month by sink and the week by day', async () => {
    await go(page, '#/usage', '#usage-days')
    const days = await cells(page, '#usage-days tbody tr')
    expect(days.find((r) => r[1] === sink.name)?.[3]).toBe('2')
    await shot(page, 'usage')
    expect(errorsOf(page)).toEqual([])
  })
})

describe('levels', () => {
  it('a read key sees everything and no action', async () => {
    const page = await tab()
    await signIn(page, await newApiKey('read', owner.project))
    await page.waitForSelector(`tr[data-sink="${sink.id}"]`)
    await go(page, `#/sinks/${sink.id}`, '#rolls')
    expect(await page.$$('#actions, form[data-action]')).toHaveLength(0)
    expect(await page.textContent('#who')).toMatch(/^read key, project prj_[0-9a-f]+$/)
  })

  it('a write key acts only after confirming: the roll policy, a dedupe, a delete', async () => {
    const page = await tab()
    await signIn(page, await newApiKey('write', owner.project))
    await page.waitForSelector(`tr[data-sink="${keyed.id}"]`)
    await go(page, `#/sinks/${keyed.id}`, '#actions')
    await page.fill('#actions input[name=roll_seconds]', '900')
    // Dismissed: nothing is sent.
    page.once('dialog', (d) => void d.dismiss())
    await page.click('#actions form[data-action=PATCH] button')
    expect((await call(`/v1/sinks/${keyed.id}`, { key: owner.key })).body.roll.roll_seconds).toBe(3600)
    page.once('dialog', (d) => {
      expect(d.message()).toContain('roll policy')
      void d.accept()
    })
    await page.click('#actions form[data-action=PATCH] button')
    await page.waitForFunction(() => document.querySelector('#policy')?.textContent?.includes('every 15 m'))
    expect((await call(`/v1/sinks/${keyed.id}`, { key: owner.key })).body.roll.roll_seconds).toBe(900)

    page.once('dialog', (d) => void d.accept())
    await page.click(`#actions form[data-path="/v1/sinks/${keyed.id}/dedupe"] button`)
    await page.waitForFunction(() => document.querySelector('#dedupe')?.textContent?.startsWith('requested'))
    expect((await call(`/v1/sinks/${keyed.id}`, { key: owner.key })).body.dedupe.requested_at).toEqual(expect.any(String))
    await shot(page, 'sink-actions')

    page.once('dialog', (d) => {
      expect(d.message()).toContain(`Delete ${keyed.name}?`)
      void d.accept()
    })
    await page.click('#actions form[data-action=DELETE] button')
    await page.waitForFunction((id) => document.querySelector('#sinks') && !document.querySelector(`tr[data-sink="${id}"]`), keyed.id)
    expect((await call(`/v1/sinks/${keyed.id}`, { key: owner.key })).body.state).toBe('deleted')
    expect(errorsOf(page)).toEqual([])
  })
})

describe('rotating a send key', () => {
  it('a write key rotates after confirming, sees the new key once, and retires the previous one', async () => {
    const rotated = await newSink(owner.key, {
      tableSpec: { warehouse: owner.warehouse, namespace: 'console_ui', columns: COLUMNS },
      sink: { warehouse: owner.warehouse, roll_seconds: 3600 },
    })
    try {
      const page = await tab()
      await signIn(page, await newApiKey('write', owner.project))
      await page.waitForSelector(`tr[data-sink="${rotated.id}"]`)
      await go(page, `#/sinks/${rotated.id}`, '#actions')
      const form = `#actions form[data-path="/v1/sinks/${rotated.id}/send-keys"]`
      await page.fill(`${form} input[name=retire_previous_after_seconds]`, '600')
      page.once('dialog', (d) => {
        expect(d.message()).toContain(`Rotate the send key of ${rotated.name}?`)
        void d.accept()
      })
      await page.click(`${form} button`)
      await page.waitForSelector('#new-key:not([hidden]) code')
      const key = (await page.textContent('#new-key code')) ?? ''
      expect(key).toMatch(/^al_send_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/)
      const retires = (await call(`/v1/sinks/${rotated.id}`, { key: owner.key })).body.previous_send_key_retires_at
      expect(await page.textContent('#new-key p')).toContain(retires)
      // Both keys work during the overlap.
      expect((await send({ id: rotated.id, sendKey: key }, [{ x: 1 }])).status).toBe(202)
      expect((await send(rotated, [{ x: 2 }])).status).toBe(202)

      // The page shown again offers the retirement.
      await go(page, '#/', `tr[data-sink="${rotated.id}"]`)
      await go(page, `#/sinks/${rotated.id}`, `#actions form[data-path="/v1/sinks/${rotated.id}/send-keys/previous"]`)
      page.once('dialog', (d) => void d.accept())
      await page.click(`#actions form[data-path="/v1/sinks/${rotated.id}/send-keys/previous"] button`)
      await page.waitForFunction(
        (id) => document.querySelector('#actions') && !document.querySelector(`form[data-path="/v1/sinks/${id}/send-keys/previous"]`),
        rotated.id,
      )
      expect((await send(rotated, [{ x: 3 }])).status).toBe(401)
      expect((await send({ id: rotated.id, sendKey: key }, [{ x: 4 }])).status).toBe(202)
      expect(errorsOf(page)).toEqual([])
    } finally {
      await call(`/v1/sinks/${rotated.id}`, { key: owner.key, method: 'DELETE' })
    }
  })
})

describe('on a phone', () => {
  it('the overview fits the width: wide tables scroll inside their box, not the page', async () => {
    const page = await tab(390)
    await signIn(page, owner.key)
    await page.waitForSelector(`tr[data-sink="${sink.id}"]`)
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    await shot(page, 'overview-phone')
  })
})
