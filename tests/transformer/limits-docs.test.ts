// The sandbox limits the docs state are the server's: every `SLUICE_TRANSFORM_…` setting a doc
// gives a value for says the default that config/config.ts applies (docs/webhooks.md once said
// 1000 ms, 5000 ms and 64 MB while the server ran 100 ms, 1 s and 32 MB).
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { loadConfig } from '../../config/config.ts'
import { ROOT } from '../helpers/server.ts'

const defaults = loadConfig('dev', {}, {})
const SETTINGS: Record<string, number> = {
  SLUICE_TRANSFORM_CPU_TIME_MS: defaults.transformCpuTimeMs,
  SLUICE_TRANSFORM_WALL_TIME_MS: defaults.transformWallTimeMs,
  SLUICE_TRANSFORM_ISOLATE_MEMORY_MB: defaults.transformIsolateMemoryMb,
  SLUICE_TRANSFORM_MAX_OUTPUT_BYTES: defaults.transformMaxOutputBytes,
  SLUICE_TRANSFORM_ISOLATES: defaults.transformIsolates,
  SLUICE_TRANSFORM_WEBHOOK_CONCURRENCY: defaults.transformWebhookConcurrency,
  SLUICE_TRANSFORM_BREAKER_KILLS: defaults.transformBreakerKills,
  SLUICE_TRANSFORM_BREAKER_PAUSE_MS: defaults.transformBreakerPauseMs,
  SLUICE_TRANSFORM_BUDGET_MS: defaults.transformBudgetMs,
  SLUICE_TRANSFORM_SLOW_ISOLATES: defaults.transformSlowIsolates,
}

/** "`SLUICE_X` 100", "`SLUICE_X` (100)", "`SLUICE_X`, 100 ms", "1 s", "32 MB", "1 MiB" → a number in the setting's unit. */
function statedValues(text: string, name: string): number[] {
  const pattern = new RegExp('`' + name + '`,?\\s*\\(?(\\d[\\d_]*)\\s*(ms|s|MB|MiB)?\\b', 'g')
  return [...text.matchAll(pattern)].map(([, digits, unit]) => {
    const n = Number(digits.replaceAll('_', ''))
    if (unit === 's') return n * 1000
    if (unit === 'MiB') return n * 1024 * 1024
    return n
  })
}

// README's settings table moved to docs/configuration.md, which tests/ops/config-doc.test.ts checks
// against the same defaults; README's webhook summary is checked below.
for (const doc of ['docs/webhooks.md', 'docs/errors.md']) {
  t.test(`${doc} states the sandbox limits the server applies`, async (t) => {
    const text = await readFile(join(ROOT, doc), 'utf8')
    let stated = 0
    for (const [name, value] of Object.entries(SETTINGS)) {
      for (const found of statedValues(text, name)) {
        stated++
        t.equal(found, value, `${name}: ${found} in ${doc}, the server's default is ${value}`)
      }
    }
    t.ok(stated > 0, `${doc} states some limit`)
  })
}

t.test('README names the CPU and memory limits in its webhook summary as the defaults', async (t) => {
  const text = await readFile(join(ROOT, 'README.md'), 'utf8')
  t.match(text, `(${defaults.transformCpuTimeMs} ms CPU, ${defaults.transformIsolateMemoryMb} MB`)
})
