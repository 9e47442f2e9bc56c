// The alert parts of a composition (api role): the rules and their REST routes, and the evaluator,
// which one api process runs at a time (by lease).
import type { Logger } from 'pino'
import type { Output } from '../bus/output.ts'
import type { EventRecord } from '../core/event.ts'
import { createAlertRules } from '../control/alerts.ts'
import type { ControlStore } from '../control/types.ts'
import type { Webhooks } from '../control/webhooks.ts'
import type { RunStore } from '../store/runs-types.ts'
import type { WebhookRequestStore } from '../store/requests-types.ts'
import { alertRoutes } from '../api/alerts.ts'
import { createAlertEvaluator } from '../api/alert-evaluator.ts'
import { createMeasure } from '../api/alert-measure.ts'
import { createNotifier } from '../api/alert-notify.ts'
import type { Config } from '../config/config.ts'

export interface AlertPartsDeps {
  control: ControlStore
  webhooks: Webhooks
  requests: WebhookRequestStore
  runs: RunStore
  incoming: Output<EventRecord>
  log: Logger
}

export function createAlertParts(deps: AlertPartsDeps, config: Config) {
  const rules = createAlertRules(deps.control, { allowLoopbackEndpoints: config.mode === 'dev' })
  const measure = createMeasure({
    webhooks: deps.webhooks,
    requests: deps.requests,
    runs: deps.runs,
    functionExists: (env, key) => deps.control.get('function', `${env}/${key}`) !== undefined,
  })
  return {
    routes: alertRoutes({ rules, webhooks: deps.webhooks, control: deps.control }),
    evaluator: createAlertEvaluator(
      {
        control: deps.control,
        rules,
        measure,
        notify: createNotifier(),
        incoming: deps.incoming,
        log: deps.log.child({ stage: 'alerts' }),
      },
      { intervalMs: config.alertEvaluateIntervalMs },
    ),
  }
}
