// An `env`-scoped concurrency limit holds across runners only when the function's runs are routed by
// its key (core/flow.ts `routingKey`, runner/consumer-groups.ts). Where they cannot be (another
// option keyed otherwise or not at all, or two such limits) the limit would be counted per runner:
// such a function is refused when registered, in both modes, naming the options to change.
import { routingKey, type FlowControl } from '../core/flow.ts'
import { SluiceError } from '../core/errors.ts'

/** The options a run is keyed by, named as createFunction takes them. */
function keyedOptions(flow: FlowControl): Array<{ option: string; key: string | undefined }> {
  const named: Array<[string, { key?: string } | undefined]> = [
    ...(flow.concurrency ?? []).map((c, i) => [`concurrency[${i}]`, c] as [string, { key?: string }]),
    ['throttle', flow.throttle],
    ['rateLimit', flow.rateLimit],
    ['debounce', flow.debounce],
    ['batchEvents', flow.batchEvents],
    ['idempotency', flow.idempotency === undefined ? undefined : { key: flow.idempotency }],
    ['singleton', flow.singleton],
  ]
  return named.filter(([, o]) => o !== undefined).map(([option, o]) => ({ option, key: o!.key }))
}

const shown = (key: string | undefined) => (key === undefined ? 'no key' : `key ${JSON.stringify(key)}`)

/** Throws FLOW_ENV_LIMIT_UNROUTED when `flow` has an env-scoped limit its runs cannot be routed by. */
export function refuseUnroutedEnvLimit(where: string, flow: FlowControl | undefined): void {
  const envLimits = (flow?.concurrency ?? []).map((c, i) => ({ ...c, i })).filter((c) => c.scope === 'env')
  if (flow === undefined || envLimits.length === 0) return
  const [first] = envLimits
  if (envLimits.length > 1) {
    const listed = envLimits.map((c) => `concurrency[${c.i}] (${shown(c.key)})`).join(', ')
    throw new SluiceError(
      'FLOW_ENV_LIMIT_UNROUTED',
      `${where}: ${listed} are two env-scoped concurrency limits; one process can count only one across ` +
        'runners: keep one, or make the others scope "fn"',
    )
  }
  if (routingKey(flow) === first.key) return
  const others = keyedOptions(flow).filter((o) => o.key !== first.key)
  const listed = others.map((o) => `${o.option} (${shown(o.key)})`).join(', ')
  throw new SluiceError(
    'FLOW_ENV_LIMIT_UNROUTED',
    `${where}: concurrency[${first.i}] is env-scoped by key ${JSON.stringify(first.key)} but ${listed} ` +
      `${others.length > 1 ? 'use' : 'uses'} another, so its runs cannot be routed by it and the limit would ` +
      `be counted per runner: give ${others.length > 1 ? 'them' : 'it'} the key ${JSON.stringify(first.key)}, ` +
      'or make the limit scope "fn"',
  )
}
