// Where the CLI's control commands find the server: read here, beside the settings table, and without the
// schema that checks a server's settings, so that a control command loads nothing of the server.
import { DEFAULTS, SETTINGS } from './settings.ts'

export type ApiFlags = Record<string, string | boolean | undefined>

/** Where the CLI's control commands find the server. */
export function apiTarget(
  flags: ApiFlags = {},
  env: NodeJS.ProcessEnv = process.env,
): { url: string; signingKey?: string; eventKey?: string } {
  const url =
    (flags.url as string | undefined) ?? env.SLUICE_URL ?? `http://127.0.0.1:${env[SETTINGS.port.env] ?? DEFAULTS.port}`
  return {
    url,
    // The bearer: the signing key, or an API token of the user's role (docs/teams.md).
    signingKey: (flags.signingKey as string | undefined) ?? env.SLUICE_TOKEN ?? env.SLUICE_SIGNING_KEY,
    eventKey: env.SERVICE_EVENT_KEY,
  }
}
