// `startRunner({ client, functions })`: serves functions from the user's own process.
import { isSluiceFunction, type SluiceFunction } from './function.ts'

export interface RunnerOptions {
  client: { id: string }
  functions: SluiceFunction[]
  /** Server settings, named as the CLI's flags in camelCase (`port`, `dataDir`, …); the rest comes from SLUICE_* variables. */
  flags?: Record<string, string | boolean | undefined>
  /** `dev` (open REST API, any event key) or `start` (needs a signing key). Default: `start`. */
  mode?: 'dev' | 'start'
}

export interface RunningRunner {
  url: string
  stop(): Promise<void>
}

export async function startRunner(options: RunnerOptions): Promise<RunningRunner> {
  const functions = options.functions ?? []
  functions.forEach((fn, i) => {
    if (!isSluiceFunction(fn))
      throw new TypeError(`startRunner({ functions }): functions[${i}] is not made by client.createFunction`)
    if (fn.appId !== options.client.id)
      throw new TypeError(
        `startRunner({ functions }): functions[${i}] belongs to app "${fn.appId}", not to the client's app "${options.client.id}"`,
      )
  })
  // The server is the app, not this library: it is reached through the package's public entry
  // point `sluice/server` (package.json exports), as a user's code would, never by a path into
  // cli/. Loaded on demand: a producer that only sends events never loads the server.
  const { startRunnerProcess } = await import('sluice/server')
  return startRunnerProcess(functions, options.flags ?? {}, options.mode ?? 'start')
}
