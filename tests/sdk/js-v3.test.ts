// npm inngest 3.54 (the real package, as inngest-v3): an app synced into Sluice in production runs
// every behaviour of tests/sdk/js-suite.ts.
import t from 'tap'
import { jsAppSuite } from './js-suite.ts'

jsAppSuite(t, 'v3')
