// The request path's counters and histograms (SeriesCounter, SeriesHistogram in core/metrics.ts)
// export what prom-client's Counter and Histogram export for the same counts, line for line.
import t from 'tap'
import { Counter, Histogram, Registry } from 'prom-client'
import { SeriesCounter, SeriesHistogram, registry } from '../../core/metrics.ts'

const BUCKETS = [0.001, 0.01, 0.1, 1]
const observed: Array<[labels: { method: string; route: string }, value: number]> = [
  [{ method: 'POST', route: '/e' }, 0.0005],
  [{ method: 'POST', route: '/e' }, 0.001], // on a bound: that bucket's
  [{ method: 'POST', route: '/e' }, 0.05],
  [{ method: 'POST', route: '/e' }, 7], // past every bound: +Inf's only
  [{ method: 'GET', route: '/v1/events/:id' }, 0.002],
]

/** The lines of one metric's text, its name replaced, from a registry holding it. */
async function textOf(from: Registry, name: string): Promise<string> {
  return (await from.getSingleMetricAsString(name)).replaceAll(name, 'metric')
}

t.test('a histogram exports the buckets, sum and count prom-client exports', async (t) => {
  const mine = new SeriesHistogram<'method' | 'route'>({
    name: 'test_series_histogram_seconds',
    help: 'h',
    labelNames: ['method', 'route'],
    buckets: BUCKETS,
  })
  const theirs = new Registry()
  const reference = new Histogram({
    name: 'reference_seconds',
    help: 'h',
    labelNames: ['method', 'route'],
    buckets: BUCKETS,
    registers: [theirs],
  })
  for (const [labels, value] of observed) {
    mine.series(labels).observe(value)
    reference.observe(labels, value)
  }
  const text = await textOf(registry, 'test_series_histogram_seconds')
  t.equal(text, await textOf(theirs, 'reference_seconds'))
  t.match(text, 'metric_bucket{le="+Inf",method="POST",route="/e"} 4')
  t.match(text, 'metric_bucket{le="0.001",method="POST",route="/e"} 2')
  t.equal(
    mine.series({ method: 'POST', route: '/e' }),
    mine.series({ route: '/e', method: 'POST' }),
    'one series per label set',
  )
  mine.reset()
  reference.reset()
  reference.zero({ method: 'POST', route: '/e' })
  reference.zero({ method: 'GET', route: '/v1/events/:id' })
  t.equal(
    await textOf(registry, 'test_series_histogram_seconds'),
    await textOf(theirs, 'reference_seconds'),
    'reset: zeros',
  )
})

t.test('a counter exports the totals prom-client exports', async (t) => {
  const mine = new SeriesCounter<'env' | 'status'>({
    name: 'test_series_total',
    help: 'c',
    labelNames: ['env', 'status'],
  })
  const theirs = new Registry()
  const reference = new Counter({
    name: 'reference_total',
    help: 'c',
    labelNames: ['env', 'status'],
    registers: [theirs],
  })
  for (const [env, status, by] of [
    ['production', 200, 3],
    ['production', 400, 1],
    ['branch-1', 200, 1],
    ['production', 200, 2],
  ] as const) {
    mine.series({ env, status }).inc(by)
    reference.inc({ env, status }, by)
  }
  t.equal(await textOf(registry, 'test_series_total'), await textOf(theirs, 'reference_total'))
  t.match(await textOf(registry, 'test_series_total'), 'metric{env="production",status="200"} 5')
})

t.test('a name registered twice is refused, as prom-client refuses it', async (t) => {
  t.throws(() => new SeriesCounter({ name: 'test_series_total', help: 'again' }), /already been registered/)
})
