// The package's version, as package.json says it (the OpenAPI document, the sluice_info metric).
import { readFileSync } from 'node:fs'

export function packageVersion(): string {
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string
  }
  return version
}
