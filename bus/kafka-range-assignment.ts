// Kafka's range assignment, for a subscription with `coPartitioned` (bus/types.ts): partition i of every
// topic goes to the same member when the topics have the same partition count, so records keyed alike
// on several topics meet in one process. Neither client ships it (kafkajs has round robin only,
// @platformatic/kafka round robin and cooperative sticky), so each adapter wraps this one plan.
import type { TopicPartitions } from './types.ts'

/**
 * Per member (sorted by id, as the Java RangeAssignor does), a contiguous range of each topic's
 * partitions: with n partitions and m members, member k takes n / m of them, and one more while
 * k < n % m. The plan depends on partition numbers and members only, never on the topic's name.
 */
export function rangeAssignment(
  memberIds: string[],
  partitionCounts: Map<string, number>,
): Map<string, TopicPartitions[]> {
  const members = [...memberIds].sort()
  const plan = new Map<string, TopicPartitions[]>(members.map((id) => [id, []]))
  for (const [topic, count] of partitionCounts) {
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
