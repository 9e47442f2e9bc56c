// The client library's only reads of the environment (a user's process, not the server's config).
export function clientEnv(env: NodeJS.ProcessEnv = process.env): { eventKey?: string; baseUrl?: string; env?: string } {
  return {
    eventKey: env.SERVICE_EVENT_KEY || undefined,
    baseUrl: env.SERVICE_BASE_URL || undefined,
    env: env.SERVICE_ENV || undefined,
  }
}
