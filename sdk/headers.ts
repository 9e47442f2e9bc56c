// The headers of the Inngest SDK protocol (SDK_SPEC.md 4.1.1), as node:http names them (lower case).
export const SDK_HEADERS = {
  signature: 'x-inngest-signature',
  serverKind: 'x-inngest-server-kind',
  expectedServerKind: 'x-inngest-expected-server-kind',
  syncKind: 'x-inngest-sync-kind',
  noRetry: 'x-inngest-no-retry',
  sdk: 'x-inngest-sdk',
  reqVersion: 'x-inngest-req-version',
} as const
