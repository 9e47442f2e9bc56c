// PyPI inngest 0.5.19 on Flask 3.1.3 (a venv the provision step makes): tests/sdk/other-sdks.ts.
import t from 'tap'
import { otherSdkSuite } from './other-sdks.ts'

otherSdkSuite(t, 'python')
