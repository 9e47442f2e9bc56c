// The notification's body and signature without a network: a Slack incoming webhook gets a Slack
// message, any other endpoint the JSON notification; both verify with the standardwebhooks library.
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { notificationBody, signStandardWebhook } from '../../api/alert-notify.ts'
import type { AlertIncidentDoc, AlertRuleDoc } from '../../control/types.ts'

const rule: AlertRuleDoc = {
  id: 'al_1',
  name: 'stripe failing',
  target: { kind: 'webhook', id: 'wh_1' },
  env: 'production',
  metric: 'failed_requests',
  threshold: 5,
  windowMs: 300_000,
  endpoint: 'https://hooks.slack.com/services/T000/B000/XXXX',
  secret: `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`,
  createdAt: 0,
}
const incident: AlertIncidentDoc = {
  id: '01JAAAAAAAAAAAAAAAAAAAAAAA',
  ruleId: 'al_1',
  status: 'open',
  openedAt: 1_700_000_000_000,
  openedValue: 7,
  value: 7,
  notification: { event: 'fired', status: 'pending', attempts: 0 },
}

t.test('a Slack incoming webhook gets {text}, naming the rule, target and value', async (t) => {
  const body = JSON.parse(notificationBody(rule, incident, 'fired'))
  t.same(Object.keys(body), ['text'])
  t.match(body.text, /stripe failing\* fired: webhook wh_1: failed_requests 7 \(threshold 5, 300 s\)/)
  t.match(JSON.parse(notificationBody(rule, { ...incident, value: 0 }, 'resolved')).text, /resolved/)
})

t.test('another endpoint gets the JSON notification', async (t) => {
  const other = { ...rule, endpoint: 'https://ops.example.com/alerts' }
  const body = JSON.parse(notificationBody(other, incident, 'fired'))
  t.equal(body.type, 'alert.fired')
  t.match(body.data, { rule: { id: 'al_1', window_seconds: 300 }, incident: { id: incident.id, value: 7 } })
})

t.test('the signature verifies with the standardwebhooks library, and not once tampered', async (t) => {
  const body = notificationBody(rule, incident, 'fired')
  const timestamp = Math.floor(Date.now() / 1000)
  const headers = {
    'webhook-id': 'msg_1',
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signStandardWebhook(rule.secret, 'msg_1', timestamp, body),
  }
  t.same(new Webhook(rule.secret).verify(body, headers), JSON.parse(body))
  t.throws(() => new Webhook(rule.secret).verify(`${body} `, headers))
})
