// The allow/deny list rules on their own: CIDR (IPv4, IPv6, IPv4-mapped) and `*` name patterns.
import t from 'tap'
import { ipRules, nameRules, normalizeIp, parseCidr } from '../../control/webhook-lists.ts'

t.test('CIDR entries: blocks and bare addresses of both families; anything else is a message', async (t) => {
  t.same(parseCidr('10.0.0.0/8'), { address: '10.0.0.0', prefix: 8, family: 'ipv4' })
  t.same(parseCidr('2001:db8::/32'), { address: '2001:db8::', prefix: 32, family: 'ipv6' })
  t.same(parseCidr('192.0.2.1'), { address: '192.0.2.1', prefix: 32, family: 'ipv4' })
  t.same(parseCidr('::1'), { address: '::1', prefix: 128, family: 'ipv6' })
  t.match(parseCidr('10.0.0.0/33'), /prefix length must be 0 to 32/)
  t.match(parseCidr('2001:db8::/129'), /prefix length must be 0 to 128/)
  t.match(parseCidr('10.0.0.0/'), /prefix length/)
  t.match(parseCidr('300.1.1.1'), /not an IPv4 or IPv6 address/)
  t.match(parseCidr('example.com'), /not an IPv4 or IPv6 address/)
})

t.test('IP rules: an empty allow list admits all, a non-empty one only its blocks; deny wins', async (t) => {
  const open = ipRules([], [])
  t.ok(open.allows('203.0.113.9') && open.allows('2001:db8::1'))
  const rules = ipRules(['192.30.252.0/22', '2001:db8::/32'], ['192.30.253.0/24'])
  t.ok(rules.allows('192.30.252.1'))
  t.ok(rules.allows('2001:db8:ffff::1'))
  t.notOk(rules.allows('192.30.253.9'), 'denied inside an allowed block')
  t.notOk(rules.allows('8.8.8.8'))
  t.notOk(rules.allows('2001:db9::1'))
  t.ok(rules.allows('::ffff:192.30.252.1'), 'an IPv4 client seen on a dual-stack socket')
  t.equal(normalizeIp('::ffff:192.30.252.1'), '192.30.252.1')
  t.notOk(ipRules(['10.0.0.0/8'], []).allows('not-an-ip'), 'an unparseable address never passes a list')
})

t.test('name rules: * matches any run of characters, the rest is literal; deny wins', async (t) => {
  const rules = nameRules(['github/*', 'stripe/invoice.*'], ['github/*.deleted'])
  t.equal(rules.refusal('github/push'), undefined)
  t.equal(rules.refusal('github/pull_request.opened'), undefined)
  t.match(rules.refusal('github/repository.deleted'), /matches "github\/\*\.deleted" in the webhook's deny_events list/)
  t.match(rules.refusal('stripe/charge.refunded'), /matches nothing in the webhook's allow_events list/)
  t.match(rules.refusal('stripe/invoiceXpaid'), /allow_events/, '"." is literal, not any character')
  t.equal(nameRules([], []).refusal('anything/at.all'), undefined)
  t.equal(nameRules(['exact/name'], []).refusal('exact/name'), undefined)
  t.match(nameRules(['exact/name'], []).refusal('exact/name2'), /allow_events/)
})
