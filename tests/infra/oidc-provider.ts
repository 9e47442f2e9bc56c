// A real OpenID Provider for the SSO tests: `oidc-provider` (OpenID Certified) on a free loopback
// port, with one confidential client whose redirect URI is Sluice's callback, its development
// sign-in pages (any login, any password: the login is the account), and accounts whose claims the
// test gives. Stopped with `stop()`.
import { createServer } from 'node:http'
import Provider from 'oidc-provider'
import { freePort } from './ports.ts'

export interface TestProvider {
  issuer: string
  clientId: string
  clientSecret: string
  stop(): Promise<void>
}

export async function startOidcProvider(options: {
  redirectUri: string
  /** Each login's claims (besides `sub`, which is the login). */
  accounts: Record<string, Record<string, unknown>>
}): Promise<TestProvider> {
  const port = await freePort()
  const issuer = `http://127.0.0.1:${port}`
  const clientId = 'sluice'
  const clientSecret = 'a-client-secret-for-the-tests-0123456789'
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'sluice_role'] },
    // The scope's claims in the ID token itself, where Sluice reads them.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    cookies: { keys: ['a-cookie-key-for-the-tests'] },
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({ sub: id, ...(options.accounts[id] ?? {}) }),
    }),
  })
  const server = createServer(provider.callback())
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  return {
    issuer,
    clientId,
    clientSecret,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
