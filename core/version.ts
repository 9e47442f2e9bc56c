// The package's version, as package.json says it (the OpenAPI document, the sluice_info metric).
// Resolved by the package's own name (its exports list ./package.json), so it is found from the
// TypeScript sources and from the built dist/ alike.
import { createRequire } from 'node:module'

export function packageVersion(): string {
  return (createRequire(import.meta.url)('sluice/package.json') as { version: string }).version
}
