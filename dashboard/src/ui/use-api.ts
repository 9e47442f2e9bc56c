import { useCallback, useEffect, useState } from 'preact/hooks'
import { authEpoch, currentEnv, signingKey } from '../api.ts'

export interface Loaded<T> {
  data?: T
  error?: Error
  loading: boolean
  reload(): void
}

/** Loads once per change of `deps` (and of the signing key or environment); `reload()` loads again. */
export function useApi<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true })
  const [tick, setTick] = useState(0)
  const key = signingKey.value
  const env = currentEnv.value
  const epoch = authEpoch.value
  useEffect(() => {
    let current = true
    setState((s) => ({ ...s, loading: true }))
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: Error) => current && setState({ error, loading: false }),
    )
    return () => {
      current = false
    }
  }, [...deps, key, env, epoch, tick])
  return { ...state, reload: useCallback(() => setTick((t) => t + 1), []) }
}
