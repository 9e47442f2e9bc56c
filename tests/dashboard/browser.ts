// Shared by the dashboard's browser tests: a built dashboard, pages that record their script and
// console errors, screenshots at a desktop and a phone size, and axe-core checks.
import { mkdir } from 'node:fs/promises'
import { createRequire } from 'node:module'
import type { Test } from 'tap'
import type { Browser, Page } from 'playwright-core'
import { buildDashboard, dashboardIsStale } from '../../scripts/build-dashboard.ts'
import { ROOT } from '../helpers/server.ts'

export const SCREENSHOTS = `${ROOT}tests/dashboard/screenshots/`
export const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const

/** The tests run against the built bundle, rebuilt when a source is newer (as tests/run.sh does). */
export async function ensureDashboardBuilt(): Promise<void> {
  if (await dashboardIsStale()) await buildDashboard()
}

const problems = new WeakMap<Page, string[]>()

/** A page at `size`; its uncaught errors and console errors are kept for `errorsOf`. */
export async function openPage(
  t: Test,
  browser: Browser,
  url: string,
  size: keyof typeof SIZES = 'desktop',
  colorScheme: 'light' | 'dark' = 'light',
): Promise<Page> {
  const page = await browser.newPage({ viewport: SIZES[size], colorScheme })
  const errors: string[] = []
  problems.set(page, errors)
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`))
  // Chromium logs every 4xx answer to fetch() as a console error; an API error the page shows as
  // its answer (a 400 naming the field) is expected, so those network lines are left out.
  page.on('console', (message) => {
    if (
      message.type() === 'error' &&
      !/^Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())
    )
      errors.push(`console: ${message.text()}`)
  })
  t.teardown(() => page.close())
  await page.goto(url)
  return page
}

export const errorsOf = (page: Page): string[] => problems.get(page) ?? []

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true })
}

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js')

/** axe-core's serious and critical violations on the page, as "rule: target" lines. */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE })
  const violations = (await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ['violations'] })
    return result.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      targets: v.nodes.map((n: any) => n.target.join(' ')),
    }))
  })) as Array<{ id: string; impact: string; targets: string[] }>
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.targets.slice(0, 3).join(', ')}`)
}

/**
 * Replaces a CodeMirror editor's whole text, as typing would, and waits until the editor shows it.
 * CodeMirror takes the text from DOM input events; if it shows anything else after a few seconds the
 * text is put in once more, and an editor that still holds something else fails the test here, with
 * what it held, rather than later at a selector that never appears.
 */
export async function setEditor(page: Page, selector: string, text: string): Promise<void> {
  const content = page.locator(`${selector} .cm-content`)
  await content.waitFor()
  // Whitespace aside: CodeMirror re-indents a line that input ends with a closing bracket, as typing does.
  const bare = (s: string) => s.replace(/\s+/g, '')
  const shown = () =>
    page
      .locator(`${selector} .cm-line`)
      .allTextContents()
      .then((lines) => lines.join('\n'))
  for (let attempt = 1; ; attempt++) {
    await content.fill(text)
    const deadline = Date.now() + 5_000
    while (bare(await shown()) !== bare(text) && Date.now() < deadline) await page.waitForTimeout(50)
    const held = await shown()
    if (bare(held) === bare(text)) return
    if (attempt === 2) throw new Error(`editor ${selector} holds ${JSON.stringify(held)}, not the text put in`)
  }
}

/** Whether focus reaches `selector` soon: it moves in an effect, after the click's render. */
export const focusOn = (page: Page, selector: string) =>
  page
    .waitForFunction((s) => document.activeElement?.matches(s) === true, selector, { timeout: 2_000 })
    .then(
      () => true,
      () => false,
    )
