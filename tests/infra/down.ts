// Entry point run once after the test files: `node tests/infra/down.ts`.
import { downServices } from './lifecycle.ts'

await downServices()
