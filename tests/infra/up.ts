// Entry point run once before the test files (tests/run.sh, or tap's --before):
// `node tests/infra/up.ts`. The servers it starts keep running after it exits.
import { upServices } from './lifecycle.ts'

await upServices()
