import { chromium, type Browser } from 'playwright-core'

/** Debian's package; playwright's own browser downloads are not reachable here. */
export const chromiumPath = '/usr/bin/chromium'

// Flags keep a headless run from reaching out to Google services (no network here,
// and retries would only slow the tests) and from needing a GPU or a user namespace.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
]

/** Caller closes it: `await browser.close()`. */
export async function launchChromium(): Promise<Browser> {
  return await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS })
}
