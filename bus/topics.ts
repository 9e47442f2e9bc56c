// Topic names live here and in config only; stages write to named outputs.
export interface TopicNames {
  raw: string
  /** The transformer's slow lane: requests of webhooks whose transforms ran over their budget or a limit. */
  rawSlow: string
  incoming: string
  events: string
  duplicates: string
  runs: string
  control: string
  dedupChangelog: string
  functionPrefix: string
  functionStatePrefix: string
  /** Open waits and the events that may match them, keyed by what must match (router/matcher.ts). */
  waits: string
  /** Which (env, event name, match path) have waits: compacted, one partition, read whole by routers. */
  waitKeys: string
  /** The wait matcher's state changelog (distributed mode), partitioned as `waits`. */
  waitsState: string
}

export function topicNames(prefix = 'sluice'): TopicNames {
  return {
    raw: `${prefix}.raw`,
    rawSlow: `${prefix}.raw-slow`,
    incoming: `${prefix}.incoming`,
    events: `${prefix}.events`,
    duplicates: `${prefix}.duplicates`,
    runs: `${prefix}.runs`,
    control: `${prefix}.control`,
    dedupChangelog: `${prefix}.dedup-changelog`,
    functionPrefix: `${prefix}.fn.`,
    functionStatePrefix: `${prefix}.fn-state.`,
    waits: `${prefix}.waits`,
    waitKeys: `${prefix}.wait-keys`,
    waitsState: `${prefix}.waits-state`,
  }
}

/** Kafka topic names allow [a-zA-Z0-9._-]; function ids are mapped onto that safely. */
export function functionTopic(names: TopicNames, functionKey: string): string {
  return names.functionPrefix + functionKey.replace(/[^a-zA-Z0-9._-]/g, (c) => '_' + c.charCodeAt(0).toString(16))
}

/** A function's runner state changelog (distributed mode): compacted, partitioned as its topic. */
export function functionStateTopic(names: TopicNames, functionKey: string): string {
  return names.functionStatePrefix + functionTopic(names, functionKey).slice(names.functionPrefix.length)
}
