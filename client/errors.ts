/** A non-2xx answer from Sluice, with the server's stable code; the client retries only 5xx and 429. */
export class SluiceRequestError extends Error {
  readonly status: number
  readonly code: string
  /** From a 429's Retry-After header: how long the server asked to wait. */
  readonly retryAfterMs?: number
  constructor(status: number, code: string, message: string, retryAfterMs?: number) {
    super(message)
    this.name = 'SluiceRequestError'
    this.status = status
    this.code = code
    if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs
  }
}

export { NonRetriableError } from '../core/execution.ts'
