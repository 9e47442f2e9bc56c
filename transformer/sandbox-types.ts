// The Sandbox interface: runs a webhook's user-written transform on one request. Expected
// outcomes (a transform that throws, loops, or allocates too much) are values, not exceptions;
// `run` rejects only on infrastructure failure (e.g. after `close`).
import type { SandboxErrorCode } from '../core/errors.ts'

export interface TransformInput {
  body: unknown
  headers: Record<string, string>
  query: Record<string, string[]>
  raw: string
}

export type TransformResult =
  | { kind: 'ok'; value: unknown } // whatever transform returned (JSON-cloned); validation happens elsewhere
  | { kind: 'error'; code: SandboxErrorCode; message: string }

export type TransformErrorCode = Extract<TransformResult, { kind: 'error' }>['code']

export interface RunOptions {
  /** Once aborted the caller has given up: a call not started never starts, a stopped one runs no more. */
  signal?: AbortSignal
  /** Called when the call's batch starts running in an isolate (a call run again calls it again). */
  onStart?: () => void
  /**
   * A call of a transform not yet proven within its limits (or whose last call hit one): such
   * calls hold at most all isolates but one, so a proven transform always finds one free.
   */
  probation?: boolean
}

export interface SandboxLimits {
  cpuTimeMs: number
  wallTimeMs: number
  isolateMemoryMb: number
  maxOutputBytes: number
}

export interface Sandbox {
  /**
   * Runs `source`'s transform on input. Compiles once per (sourceKey) and reuses it. Never throws for user-code
   * problems: returns kind 'error'. A call given up on (`options.signal`) resolves as TRANSFORM_TIMEOUT.
   */
  run(sourceKey: string, source: string, input: TransformInput, options?: RunOptions): Promise<TransformResult>
  close(): Promise<void>
}
