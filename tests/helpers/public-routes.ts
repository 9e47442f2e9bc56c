// The routes open without the signing key: probes, the API description, signing in and the dashboard's
// static files (the data they show comes from the REST API, which is closed). /metrics is not on the HTTP
// port of sluice start (the ops port serves it) unless SLUICE_METRICS_LISTENER says so.
// Written out here, not read from the server, so the tests say what should be open.
export const PUBLIC_ROUTES: ReadonlySet<string> = new Set([
  'GET /healthz',
  'GET /readyz',
  'GET /v1/openapi.json',
  // Signing in: the email and password are the credential (api/users.ts).
  'POST /v1/auth/login',
  'GET /v1/auth/providers',
  'GET /',
  'GET /dashboard',
  'GET /dashboard/:file',
])

/** The rendered API reference (@fastify/swagger-ui) is public, like the document it renders. */
export const isPublicRoute = (route: string) => PUBLIC_ROUTES.has(route) || route.startsWith('GET /docs')
