// Query parameters whose rules a schema cannot state; the schemas (api/schemas.ts) check the rest.
import { SluiceError } from '../core/errors.ts'
import { isUlid } from '../core/ids.ts'

/** A time filter: milliseconds, or an ISO 8601 time (converted to milliseconds). */
export function queryTime(field: string, text: string | undefined, where = 'query'): number | undefined {
  if (text === undefined || text === '') return undefined
  const value = /^\d+$/.test(text) ? Number(text) : Date.parse(text)
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new SluiceError('REQUEST_INVALID', `${where}.${field}: must be an integer (milliseconds) or an ISO 8601 time`)
  }
  return value
}

/** A page cursor is the ID of the last item of the previous page. */
export function pageCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined || cursor === '') return undefined
  if (!isUlid(cursor)) throw new SluiceError('REQUEST_INVALID', 'query.cursor: not a cursor returned by this API')
  return cursor
}
