// Drives one run of a real SDK app's function to its end the way Inngest's executor does, recording every
// call and answer (tests/sdk/capture/capture.ts). The memos it feeds back are the formats the SDKs read:
// a step's output `{data}`, a step's error `{error}`, a sleep `null`, a wait the event or `null`, an
// invoke `{data}` or `{error}`. Where a real server would do the work (a sleep, a wait, an invoke) the
// driver answers at once with a value derived from the event.
import { type Answer, callApp } from './fake-server.ts'

export interface RunEvent {
  name: string
  data: Record<string, unknown>
  id?: string
  ts?: number
  user?: Record<string, unknown>
}

export interface DriveOptions {
  appUrl: string
  fnId: string
  events: RunEvent[]
  signingKey?: string
  disableImmediateExecution?: boolean
  /** Extra ctx fields (fn_id, qi_id: the JS v4 checkpointing switch). */
  ctx?: Record<string, unknown>
  maxAttempts?: number
  /** What an invoked function returns (invoke's memo `{data}`), or its error (`{error}`). */
  invokeResult?: unknown
  invokeError?: { name: string; message: string }
  /** The wait times out: its memo is null. */
  waitTimesOut?: boolean
  /** Attempts the driver allows a failing step when the call carries no max_attempts (default 3). */
  driverAttempts?: number
}

export interface Exchange {
  note: string
  query: string
  request: unknown
  answer: { status: number; headers: Record<string, string>; body: unknown }
}

// biome-ignore lint/suspicious/noExplicitAny: opcodes as the SDKs send them
type Op = Record<string, any>

/** Headers worth recording (dates and lengths vary per call). */
const kept = /^(x-inngest-|retry-after|content-type|server-timing)/

export function answerOf(a: Answer): Exchange['answer'] {
  const headers = Object.fromEntries(Object.entries(a.headers).filter(([k]) => kept.test(k)))
  return { status: a.status, headers, body: a.body }
}

export async function drive(o: DriveOptions): Promise<Exchange[]> {
  const exchanges: Exchange[] = []
  const steps: Record<string, unknown> = {}
  const stack: string[] = []
  const planned: string[] = []
  let attempt = 0
  let version = -1
  const memo = (id: string, value: unknown) => {
    steps[id] = value
    if (!stack.includes(id)) stack.push(id)
  }
  for (let call = 0; call < 14; call++) {
    const stepId = planned.shift() ?? 'step'
    const query = `fnId=${encodeURIComponent(o.fnId)}&stepId=${encodeURIComponent(stepId)}`
    const body = {
      event: o.events[0],
      events: o.events,
      steps: { ...steps },
      ctx: {
        run_id: '01CAPTURERUN0000000000000000',
        attempt,
        ...(o.maxAttempts !== undefined && { max_attempts: o.maxAttempts }),
        disable_immediate_execution: o.disableImmediateExecution ?? false,
        use_api: false,
        stack: { stack: [...stack], current: stack.length },
        ...o.ctx,
      },
      version,
      use_api: false,
    }
    const raw = await callApp(`${o.appUrl}?${query}`, { method: 'POST', body, signingKey: o.signingKey })
    const answer = answerOf(raw)
    const reqVersion = Number(raw.headers['x-inngest-req-version'])
    if (Number.isInteger(reqVersion)) version = reqVersion
    const ops: Op[] = raw.status === 206 && Array.isArray(raw.body) ? raw.body : []
    exchanges.push({ note: noteOf(raw.status, ops), query, request: body, answer })
    if (raw.status !== 206) return exchanges
    let retried = false
    for (const op of ops) {
      switch (op.op) {
        case 'StepRun':
        case 'Step':
          memo(op.id, { data: op.data ?? null })
          break
        case 'StepPlanned':
          planned.push(op.id)
          break
        case 'StepError':
          // Retriable: the same step again on the next attempt; with no attempt left, its error is the memo.
          if (attempt + 1 < (o.maxAttempts ?? o.driverAttempts ?? 3)) {
            attempt++
            retried = true
            if (stepId !== 'step') planned.unshift(stepId)
          } else memo(op.id, { error: op.error })
          break
        case 'StepFailed':
          memo(op.id, { error: op.error })
          break
        case 'Sleep':
          memo(op.id, null)
          break
        case 'WaitForEvent':
          if (o.waitTimesOut) memo(op.id, null)
          else
            memo(op.id, {
              name: op.opts?.event ?? op.name,
              data: { id: o.events[0].data.id },
              id: '01CAPTUREWAITEVENT',
              ts: 0,
            })
          break
        case 'InvokeFunction':
          memo(op.id, o.invokeError ? { error: o.invokeError } : { data: o.invokeResult ?? null })
          break
        default:
          return exchanges
      }
    }
    if (!retried) attempt = 0
  }
  return exchanges
}

function noteOf(status: number, ops: Op[]): string {
  if (status === 206) return `206 ${ops.map((op) => op.op).join(', ')}`
  return status === 200 ? '200 done' : `${status}`
}
