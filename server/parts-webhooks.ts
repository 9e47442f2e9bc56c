// The webhook parts of a composition: webhook control, the ingest side of `/e/<webhook id>`,
// the transformer stage with its sandbox, and the `/v1/webhooks` routes.
import type { Logger } from 'pino'
import type { Bus } from '../bus/types.ts'
import type { TopicNames } from '../bus/topics.ts'
import type { Codec } from '../bus/codec.ts'
import { createOutput, type Output } from '../bus/output.ts'
import { createSource } from '../bus/source.ts'
import type { EventLimits, EventRecord } from '../core/event.ts'
import type { RawWebhookRequest } from '../core/raw-request.ts'
import type { ControlStore } from '../control/types.ts'
import type { Envs } from '../control/envs.ts'
import { createWebhooks } from '../control/webhooks.ts'
import { createWebhookIngest } from '../ingest/webhook.ts'
import type { WebhookRequestStore } from '../store/requests-types.ts'
import { createSandbox } from '../transformer/sandbox.ts'
import { createTransformer } from '../transformer/index.ts'
import { createPreview } from '../transformer/preview.ts'
import { createReplay } from '../transformer/replay.ts'
import { createPausing } from '../transformer/pause.ts'
import { webhookRoutes } from '../api/webhooks.ts'
import type { CheckEvents } from '../control/schema-check.ts'
import type { Config } from '../config/config.ts'

export interface WebhookPartsDeps {
  bus: Bus
  requests: WebhookRequestStore
  rawCodec: Codec<RawWebhookRequest>
  control: ControlStore
  envs: Envs
  topics: TopicNames
  incoming: Output<EventRecord>
  checkEvents: CheckEvents
  log: Logger
}

export function createWebhookParts(deps: WebhookPartsDeps, config: Config) {
  const webhooks = createWebhooks(deps.control, deps.envs)
  const { requests, rawCodec } = deps
  // Keyed by webhook: one webhook's requests are transformed in the order they arrived.
  const raw = createOutput(deps.bus, deps.topics.raw, rawCodec, (r) => r.webhookId)
  const slow = createOutput(deps.bus, deps.topics.rawSlow, rawCodec, (r) => r.webhookId)
  const limits = {
    cpuTimeMs: config.transformCpuTimeMs,
    wallTimeMs: config.transformWallTimeMs,
    isolateMemoryMb: config.transformIsolateMemoryMb,
    maxOutputBytes: config.transformMaxOutputBytes,
  }
  const sandbox = createSandbox(limits, { isolates: config.transformIsolates })
  const slowSandbox = createSandbox(limits, { isolates: config.transformSlowIsolates })
  const transformer = createTransformer(
    {
      source: createSource(deps.bus, rawCodec),
      webhooks,
      envs: deps.envs,
      sandboxes: { shared: sandbox, slow: slowSandbox },
      requests,
      outputs: { incoming: deps.incoming, slow },
      checkEvents: deps.checkEvents,
      log: deps.log.child({ stage: 'transformer' }),
    },
    {
      ...eventLimits(config),
      topics: { shared: deps.topics.raw, slow: deps.topics.rawSlow },
      groups: { shared: 'transformer', slow: 'transformer-slow' },
      maxBatchRecords: config.transformerBatchRecords,
      webhookConcurrency: config.transformWebhookConcurrency,
      budgetMs: config.transformBudgetMs,
      breaker: { kills: config.transformBreakerKills, pauseMs: config.transformBreakerPauseMs },
    },
  )
  return {
    ingest: createWebhookIngest({ webhooks, envs: deps.envs, outputs: { raw } }, { maxBodyBytes: config.maxBodyBytes }),
    routes: [
      webhookRoutes({
        webhooks,
        requests,
        replay: createReplay({ requests, outputs: { raw } }),
        preview: createPreview({ sandbox, webhooks }, eventLimits(config)),
        pausing: createPausing({ webhooks, requests, outputs: { raw } }),
      }),
    ],
    transformer,
    /** Webhook control, for the parts that watch webhooks (alerts). */
    webhooks,
    /** The sandbox's isolates, once nothing uses them any more. */
    close: () => Promise.all([sandbox.close(), slowSandbox.close()]).then(() => {}),
  }
}

function eventLimits(config: EventLimits): EventLimits {
  return {
    maxEvents: config.maxEvents,
    maxJsonDepth: config.maxJsonDepth,
    maxNameLength: config.maxNameLength,
    maxIdLength: config.maxIdLength,
  }
}
