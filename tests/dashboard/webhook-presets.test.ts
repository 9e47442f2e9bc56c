// The dashboard keeps its own copy of the preset facts (it may import nothing of the server); the
// OpenAPI document already has the enum, so no runtime fetch: this keeps the copy equal instead.
import t from 'tap'
import { VERIFICATION_PRESETS } from '../../control/types.ts'
import {
  DEFAULT_TOLERANCE_SECONDS,
  MAX_TOLERANCE_SECONDS,
  MIN_TOLERANCE_SECONDS,
  NO_DELIVERY_ID,
  PRESET_FACTS,
} from '../../control/presets.ts'
import * as dashboard from '../../dashboard/src/pages/webhook-presets.ts'

const presetsWhere = (fact: 'signsUrl' | 'timestamped') => VERIFICATION_PRESETS.filter((p) => PRESET_FACTS[p][fact])

t.test("the dashboard's preset list and facts are the server's", async (t) => {
  t.same(dashboard.PRESETS, [...VERIFICATION_PRESETS], 'the same presets, in the same order')
  t.same([...dashboard.SIGNS_URL].sort(), presetsWhere('signsUrl').sort(), 'those that sign the URL')
  t.same([...dashboard.TIMESTAMPED].sort(), presetsWhere('timestamped').sort(), 'those with a signed timestamp')
  t.same(dashboard.TOLERANCE_SECONDS, {
    min: MIN_TOLERANCE_SECONDS,
    max: MAX_TOLERANCE_SECONDS,
    default: DEFAULT_TOLERANCE_SECONDS,
  })
  t.equal(dashboard.NO_DELIVERY_ID, NO_DELIVERY_ID)
})
