// Kafka's range assignment, for a subscription with `coPartitioned` (bus/types.ts): partition i of every
// topic goes to the same member when the topics have the same partition count and the members
// subscribe to the same topics, so records keyed alike on several topics meet in one process. Neither
// client ships it (kafkajs has round robin only, @platformatic/kafka round robin and cooperative
// sticky), so each adapter wraps this one plan.
import type { TopicPartitions } from './types.ts'

/**
 * Per topic, among the members subscribed to it (sorted by id, as the Java RangeAssignor does), a
 * contiguous range of its partitions: with n partitions and m members, member k takes n / m of them,
 * and one more while k < n % m. The plan depends on partition numbers and members only, never on the
 * topic's name. A member whose subscription is unknown counts as subscribed to every topic.
 */
export function rangeAssignment(
  subscriptions: Map<string, string[] | undefined>,
  partitionCounts: Map<string, number>,
): Map<string, TopicPartitions[]> {
  const plan = new Map<string, TopicPartitions[]>([...subscriptions.keys()].map((id) => [id, []]))
  for (const [topic, count] of partitionCounts) {
    const members = [...subscriptions]
      .filter(([, topics]) => topics === undefined || topics.includes(topic))
      .map(([id]) => id)
      .sort()
    if (members.length === 0) continue
    const each = Math.floor(count / members.length)
    const extra = count % members.length
    members.forEach((id, k) => {
      const first = k * each + Math.min(k, extra)
      const size = each + (k < extra ? 1 : 0)
      if (size > 0) plan.get(id)!.push({ topic, partitions: Array.from({ length: size }, (_, i) => first + i) })
    })
  }
  return plan
}
