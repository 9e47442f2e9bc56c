// github.com/inngest/inngestgo v0.16.0 (built by the provision step): tests/sdk/other-sdks.ts.
import t from 'tap'
import { otherSdkSuite } from './other-sdks.ts'

otherSdkSuite(t, 'go')
