/** A 4xx answer from Sluice: not retried, carries the server's stable code. */
export class SluiceRequestError extends Error {
  readonly status: number
  readonly code: string
  constructor(status: number, code: string, message: string) {
    super(message)
    this.name = 'SluiceRequestError'
    this.status = status
    this.code = code
  }
}

/** Thrown inside a function to fail the run at once, with no retry. */
export class NonRetriableError extends Error {
  readonly code = 'NON_RETRIABLE'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'NonRetriableError'
  }
}
