// The executor of a function served by an app on Inngest's SDKs: one record of a run is one call
// to the app (two when the app plans a step first), and its answer becomes the same Execution an
// in-process handler gives (runner/executor.ts), so retries, pauses, flow control and the run's
// records are the runner's, unchanged. SDK_SPEC.md 4.4 and 5; docs/inngest-sdk.md.
import { canonicalJson } from './jcs.ts'
import type { Execution, ExecutionInput, SerializedError } from '../core/execution.ts'
import type { FunctionDoc } from '../control/types.ts'
import { parseDuration, parseTime, MAX_WAIT_MS } from '../core/duration.ts'
import type { Executor } from '../runner/executor.ts'
import { inngestEvent, memoOf } from './events.ts'
import { call, type CallLimits } from './http-call.ts'
import { signature, verifySignature } from './signature.ts'
import { SDK_HEADERS } from './headers.ts'

export interface HttpExecutorConfig {
  /** Signs calls and checks answers; none in dev mode (the SDKs then check nothing either). */
  signingKey?: string
  serverKind: 'dev' | 'cloud'
  connectTimeoutMs: number
  maxResponseBytes: number
  /** The app could not find the function: sync it again (a deploy may have renamed it). */
  onFunctionGone(fn: FunctionDoc): void
}

type Op = { op?: unknown; id?: unknown; name?: unknown; displayName?: unknown; opts?: any; data?: unknown; error?: any }

export function httpExecutor(fn: FunctionDoc, config: HttpExecutorConfig): Executor {
  const base = new URL(fn.runtime!.url)
  const limits: CallLimits = {
    connectTimeoutMs: config.connectTimeoutMs,
    responseTimeoutMs: fn.timeoutMs ?? 300_000,
    maxResponseBytes: config.maxResponseBytes,
  }

  async function callApp(input: ExecutionInput, stepId: string, parallel: boolean) {
    const url = new URL(base)
    url.searchParams.set('fnId', fn.key)
    url.searchParams.set('stepId', stepId)
    const stack = input.steps.map((s) => s.id)
    const body = canonicalJson({
      event: inngestEvent(input.event),
      events: input.events.map(inngestEvent),
      steps: memoOf(input.steps),
      ctx: {
        run_id: input.runId,
        attempt: input.attempt,
        max_attempts: fn.retries + 1,
        disable_immediate_execution: parallel,
        use_api: false,
        stack: { stack, current: stack.length },
      },
      version: -1,
      use_api: false,
    })
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      [SDK_HEADERS.serverKind]: config.serverKind,
    }
    if (config.signingKey) headers[SDK_HEADERS.signature] = signature(body, config.signingKey, Date.now())
    return call('POST', url, headers, body, limits)
  }

  return async (input) => {
    let answer = await callApp(input, 'step', false)
    for (let planned = 0; ; planned++) {
      const execution = await decideAnswer(answer)
      if (execution.kind !== 'planned') return execution
      // The app planned steps (parallel ones): run the first of them in a call of its own; the next
      // record's call finds it memoised and plans the others.
      if (planned > 0) return invalid(`the app planned step "${execution.stepId}" again instead of running it`)
      answer = await callApp(input, execution.stepId, true)
    }
  }

  async function decideAnswer(answer: Awaited<ReturnType<typeof callApp>>): Promise<Execution | Planned> {
    if (!answer.ok) return failure(answer.code, answer.message)
    const { status, headers, body } = answer
    if (config.signingKey && headers[SDK_HEADERS.signature] !== undefined) {
      const header = String(headers[SDK_HEADERS.signature])
      if (!verifySignature(header, body, config.signingKey, Date.now()))
        return failure('SDK_SIGNATURE_INVALID', "the answer's X-Inngest-Signature is not the signing key's")
    }
    let json: unknown
    try {
      json = body === '' ? null : JSON.parse(body)
    } catch {
      return invalid(`the answer (HTTP ${status}) is not JSON`)
    }
    const noRetry = String(headers[SDK_HEADERS.noRetry] ?? '').toLowerCase() === 'true'
    const retryAt = retryAfter(headers['retry-after'])
    if (status === 200) return { kind: 'completed', output: json }
    if (status === 206) return opcodes(json, noRetry, retryAt)
    if (status >= 400 && status < 600) {
      const error = errorOf(json, `the app answered HTTP ${status}`)
      if (status === 500 && /could not find function|function not found|no function/i.test(error.message)) {
        config.onFunctionGone(fn)
        return failure('SDK_FUNCTION_GONE', `the app has no function "${fn.key}" (${error.message})`)
      }
      return { kind: 'error', error, nonRetriable: noRetry, ...(retryAt !== undefined && { retryAt }) }
    }
    return invalid(`HTTP ${status} is not an answer of the SDK protocol`)
  }

  function opcodes(json: unknown, noRetry: boolean, retryAt: number | undefined): Execution | Planned {
    const ops = (Array.isArray(json) ? json : [json]) as Op[]
    if (ops.length === 0) return invalid('an empty list of opcodes')
    // One op decides: a completed or failed step first, then a pause, then the first planned step.
    const order = [
      'RunComplete',
      'StepRun',
      'Step',
      'StepError',
      'StepFailed',
      'Sleep',
      'WaitForEvent',
      'InvokeFunction',
    ]
    const op = ops.find((o) => order.includes(String(o?.op))) ?? ops.find((o) => o?.op === 'StepPlanned') ?? ops[0]
    if (typeof op !== 'object' || op === null) return invalid('an opcode is not an object')
    const stepId = typeof op.id === 'string' && op.id !== '' ? op.id : undefined
    const name = displayName(op)
    if (op.op === 'RunComplete') return { kind: 'completed', output: op.data ?? null }
    if (stepId === undefined) return invalid(`opcode ${String(op.op)} has no id`)
    switch (op.op) {
      case 'StepRun':
      case 'Step':
        return { kind: 'step', stepId, output: op.data ?? null, durationMs: 0, name }
      case 'StepPlanned':
        return { kind: 'planned', stepId }
      case 'StepError':
        return {
          kind: 'error',
          stepId,
          name,
          error: errorOf(op.error, `step "${name}" failed`),
          nonRetriable: noRetry,
          ...(retryAt !== undefined && { retryAt }),
        }
      case 'StepFailed':
        // Retries spent (the app counts them): memoised as an error the code after it may catch.
        return {
          kind: 'step',
          stepId,
          name,
          output: null,
          error: errorOf(op.error, `step "${name}" failed`),
          durationMs: 0,
        }
      case 'Sleep':
        // The JS SDK puts the duration (and a wait's event) in `name`; the others in `opts`.
        return sleep(stepId, name, op.opts?.duration ?? op.name)
      case 'WaitForEvent': {
        const event = op.opts?.event ?? op.name
        const timeout = parseDuration(op.opts?.timeout ?? '1y')
        if (typeof event !== 'string' || event === '') return invalid('WaitForEvent without opts.event')
        const ifExpr = typeof op.opts?.if === 'string' && op.opts.if !== '' ? { if: op.opts.if as string } : {}
        const timeoutMs = timeout.ok ? timeout.value : MAX_WAIT_MS
        return { kind: 'pause', stepId, name, pause: { kind: 'event', event, timeoutMs, ...ifExpr } }
      }
      case 'InvokeFunction': {
        const functionKey = op.opts?.function_id
        if (typeof functionKey !== 'string' || functionKey === '')
          return invalid('InvokeFunction without opts.function_id')
        const timeout = parseDuration(op.opts?.timeout ?? '')
        const data = op.opts?.payload?.data
        return {
          kind: 'pause',
          stepId,
          name,
          pause: {
            kind: 'invoke',
            functionKey,
            data: typeof data === 'object' && data !== null ? data : {},
            timeoutMs: timeout.ok ? timeout.value : MAX_WAIT_MS,
          },
        }
      }
      case 'StepNotFound':
        return failure('SDK_RESPONSE_INVALID', `the app did not find step "${name}": did its code change mid-run?`)
      default:
        return invalid(`unknown opcode ${JSON.stringify(op.op)}`)
    }
  }
}

type Planned = { kind: 'planned'; stepId: string }

const displayName = (op: Op) =>
  typeof op.displayName === 'string' && op.displayName !== ''
    ? op.displayName
    : typeof op.name === 'string' && op.name !== ''
      ? op.name
      : String(op.id)

function sleep(stepId: string, name: string, duration: unknown): Execution {
  const relative = parseDuration(duration)
  if (relative.ok) return { kind: 'pause', stepId, name, pause: { kind: 'sleep', durationMs: relative.value } }
  const until = parseTime(duration)
  if (until.ok) return { kind: 'pause', stepId, name, pause: { kind: 'sleep', untilMs: until.value } }
  return invalid(`Sleep with opts.duration ${JSON.stringify(duration)}: not a duration nor a time`)
}

function errorOf(value: unknown, fallback: string): SerializedError {
  const e = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>
  return {
    name: typeof e.name === 'string' ? e.name : 'Error',
    message: typeof e.message === 'string' ? e.message : typeof value === 'string' ? value : fallback,
    ...(typeof e.stack === 'string' && { stack: e.stack }),
    // Go's SDK reads a failed step's zero value back from it when the error is memoised.
    ...(e.data !== undefined && { data: e.data }),
  }
}

/** RFC 9110 seconds or a date; the SDKs also send an ISO 8601 time. */
function retryAfter(value: string | string[] | undefined): number | undefined {
  if (typeof value !== 'string' || value === '') return undefined
  if (/^\d+$/.test(value)) return Date.now() + Number(value) * 1000
  const at = Date.parse(value)
  return Number.isFinite(at) ? at : undefined
}

function failure(code: string, message: string): Execution {
  return { kind: 'error', error: { name: 'SdkError', code, message }, nonRetriable: false }
}

const invalid = (message: string): Execution => failure('SDK_RESPONSE_INVALID', message)
