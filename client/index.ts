// The client library: `import { Client } from 'sluice/client'`.
import { defaultRetryPolicy, type RetryPolicy } from '../core/retry.ts'
import { sendEvents, type SendEvent, type SendEvents } from './send.ts'
import { clientEnv } from './env.ts'
import {
  defineFunction,
  type FunctionHandler,
  type FunctionOptions,
  type FunctionTrigger,
  type SluiceFunction,
} from './function.ts'

export { NonRetriableError, SluiceRequestError } from './errors.ts'
export type { SendEvent, SendEvents } from './send.ts'
export type { EventData, Events, HandlerData } from './events.ts'
export type {
  CancelOn,
  Duration,
  InvokeOptions,
  WaitForEventOptions,
  FunctionContext,
  FunctionEvent,
  FunctionHandler,
  FunctionOptions,
  FunctionTrigger,
  SluiceFunction,
  StepTools,
  TriggeredEvent,
} from './function.ts'

export interface ClientOptions {
  /** The app's id: names the app whose functions this client serves. */
  id: string
  /** Defaults to SERVICE_EVENT_KEY; not needed against a Dev Server. */
  eventKey?: string
  /** Defaults to SERVICE_BASE_URL, then the local Dev Server. */
  baseUrl?: string
  /** A branch environment name (sent as x-service-env). Defaults to SERVICE_ENV. */
  env?: string
  retry?: Partial<RetryPolicy>
  fetch?: typeof fetch
}

export class Client {
  readonly id: string
  readonly baseUrl: string
  readonly eventKey: string | undefined
  readonly env: string | undefined
  private readonly retry: RetryPolicy
  private readonly fetchImpl: typeof fetch | undefined

  constructor(options: ClientOptions) {
    if (!options || typeof options.id !== 'string' || options.id === '')
      throw new TypeError('new Client({ id }): id must be a non-empty string')
    this.id = options.id
    const env = clientEnv()
    this.eventKey = options.eventKey ?? env.eventKey
    this.baseUrl = options.baseUrl ?? env.baseUrl ?? 'http://127.0.0.1:8288'
    this.env = options.env ?? env.env
    this.retry = { ...defaultRetryPolicy, ...options.retry }
    this.fetchImpl = options.fetch
  }

  /** Sends one event or many; resolves with one internal ID per event, in order. */
  send<N extends string>(events: SendEvents<N>): Promise<{ ids: string[] }> {
    // Typed per name for the caller; on the wire every event is a name and a JSON object.
    return sendEvents(events as SendEvent | SendEvent[], {
      baseUrl: this.baseUrl,
      eventKey: this.eventKey,
      env: this.env,
      retry: this.retry,
      fetch: this.fetchImpl,
    })
  }

  /**
   * Defines a function of this app, run once per event its triggers match in the client's environment
   * (or on its cron schedule). Nothing runs until a runner serves it: `sluice dev --functions FILE`, or
   * `startRunner` from `sluice/server`.
   */
  createFunction<N extends string = string>(
    options: FunctionOptions,
    trigger: FunctionTrigger<N> | FunctionTrigger<N>[],
    handler: FunctionHandler<N>,
  ): SluiceFunction {
    // The handler is typed by its trigger names for the author; the runner hands it those events.
    return defineFunction({ id: this.id, env: this.env }, options, trigger, handler as FunctionHandler)
  }
}
