// "Validate these events for environment E": the one place the Event API, step.sendEvent and the
// webhook transformer ask, so the three enforce the same modes with the same messages. With the
// environment's modes at `off`/`allow` it returns before looking at an event.
import { cappedLabel, counter } from '../core/metrics.ts'
import type { EventInput, EventRecord } from '../core/event.ts'
import { violationText } from './schema-compile.ts'
import type { Envs } from './envs.ts'
import type { Schemas } from './schemas.ts'
import type { EnvDoc } from './types.ts'

/**
 * `ok` with, in warn mode, each event's violations (undefined where it has none) to store with it;
 * `refused` with the first violation as `<where>.data/<pointer>: <rule>` (block mode).
 */
export type SchemaOutcome =
  | { kind: 'ok'; violations?: Array<string[] | undefined> }
  | { kind: 'refused'; message: string }

export const schemaViolations = counter<'env' | 'name' | 'mode'>({
  name: 'sluice_schema_violations_total',
  help: 'Events that broke their schema (or had none, under unknown_names), by environment, name and mode',
  labelNames: ['env', 'name', 'mode'],
})
const envLabel = cappedLabel(100)
const nameLabel = cappedLabel(1000)

const OK: SchemaOutcome = { kind: 'ok' }

export function createSchemaCheck(schemas: Pick<Schemas, 'active'>, envs: Pick<Envs, 'inherited'>) {
  return function checkEvents(
    env: EnvDoc,
    events: readonly EventInput[],
    where: (index: number) => string,
  ): SchemaOutcome {
    const modes = env.kind === 'branch' ? envs.inherited(env) : env
    const mode = modes.schemaMode ?? 'off'
    const unknown = modes.unknownNames ?? 'allow'
    if (mode === 'off' && unknown === 'allow') return OK
    let violations: Array<string[] | undefined> | undefined
    const nowMs = Date.now()
    for (let i = 0; i < events.length; i++) {
      const event = events[i]
      const schema = schemas.active(env, event.name, nowMs)
      let problem: string
      let action: 'off' | 'warn' | 'block' | 'allow'
      if (schema === undefined) {
        if (unknown === 'allow') continue
        problem = `.name: no schema for "${event.name}" in environment "${env.name}"`
        action = unknown
      } else {
        if (mode === 'off' || schema.validate(event.data)) continue
        problem = `.data${violationText(schema.validate.errors![0])}`
        action = mode
      }
      schemaViolations.inc({ env: envLabel(env.name), name: nameLabel(event.name), mode: action })
      if (action === 'block') return { kind: 'refused', message: `${where(i)}${problem}` }
      violations ??= new Array(events.length)
      violations[i] = [problem.slice(1)]
    }
    return violations ? { kind: 'ok', violations } : OK
  }
}

export type CheckEvents = ReturnType<typeof createSchemaCheck>

/** warn mode: each event keeps what broke its schema, stored with it. */
export function withViolations(records: EventRecord[], violations: Array<string[] | undefined>): void {
  for (let i = 0; i < records.length; i++) if (violations[i]) records[i].schemaViolations = violations[i]
}
