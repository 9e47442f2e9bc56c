// The settings of an insert on a cluster, and the batch identity behind insert_deduplication_token:
// pure functions, proven here; the cluster tests (clickhouse-cluster.test.ts) prove them on servers.
import t from 'tap'
import {
  clusterInsertSettings,
  deduplicationToken,
  effectiveQuorum,
  usesDeduplicationToken,
} from '../../store/clickhouse-layout.ts'

t.test('the default quorum is a majority of the smallest shard', async (t) => {
  t.same(
    [1, 2, 3, 4, 5].map((replicas) => effectiveQuorum(0, { replicas, shards: 2 })),
    [1, 2, 2, 3, 3],
  )
  t.equal(
    effectiveQuorum(3, { replicas: 2, shards: 1 }),
    3,
    'a quorum set is sent as set (ClickHouse refuses one too big)',
  )
})

t.test('inserts on a cluster are synchronous, with a quorum only above one replica', async (t) => {
  t.same(clusterInsertSettings(1), { insert_distributed_sync: 1 })
  t.same(clusterInsertSettings(2), { insert_distributed_sync: 1, insert_quorum: '2', insert_quorum_timeout: 10_000 })
})

t.test('a batch retried gives the same token, any other batch another', async (t) => {
  const batch = ['01J0\u00000', '01J1\u00000', '01J2\u00003']
  t.equal(deduplicationToken(batch), deduplicationToken([...batch]))
  t.not(deduplicationToken(batch), deduplicationToken(batch.slice(1)), 'fewer rows')
  t.not(deduplicationToken(batch), deduplicationToken(['01J0\u00000', '01J1\u00000', '01J2\u00004']), 'a newer version')
  t.not(deduplicationToken(['ab', 'c']), deduplicationToken(['a', 'bc']), 'identities are delimited')
  t.match(deduplicationToken(batch), /^[0-9a-f]{32}$/)
})

t.test('the token is sent from 22.2 on, where ClickHouse has it', async (t) => {
  t.same(['18.16.1', '21.8.15.7', '22.3.2.1', '26.9.2.1'].map(usesDeduplicationToken), [false, false, true, true])
})
