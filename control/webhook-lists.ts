// A webhook's allow/deny lists: source IPs as CIDR blocks (IPv4 and IPv6, through node:net's
// BlockList rather than hand-written parsing) and event names with `*` wildcards.
import { BlockList, isIP } from 'node:net'

export type IpFamily = 'ipv4' | 'ipv6'

/** `10.0.0.0/8`, `2001:db8::/32`, or a bare address (one host); the problem as text otherwise. */
export function parseCidr(entry: string): { address: string; prefix: number; family: IpFamily } | string {
  const slash = entry.indexOf('/')
  const address = slash === -1 ? entry : entry.slice(0, slash)
  const version = isIP(address)
  if (version === 0) return `"${entry}" is not an IPv4 or IPv6 address or CIDR block`
  const family: IpFamily = version === 4 ? 'ipv4' : 'ipv6'
  const max = version === 4 ? 32 : 128
  if (slash === -1) return { address, prefix: max, family }
  const prefixText = entry.slice(slash + 1)
  const prefix = Number(prefixText)
  if (!/^\d{1,3}$/.test(prefixText) || prefix > max) return `"${entry}": the prefix length must be 0 to ${max}`
  return { address, prefix, family }
}

function blockList(entries: string[]): BlockList {
  const list = new BlockList()
  for (const entry of entries) {
    const cidr = parseCidr(entry)
    if (typeof cidr === 'string') throw new Error(`invalid CIDR stored: ${cidr}`) // validated on write
    list.addSubnet(cidr.address, cidr.prefix, cidr.family)
  }
  return list
}

/** `::ffff:203.0.113.9` (an IPv4 client on a dual-stack socket) is shown and matched as `203.0.113.9`. */
export function normalizeIp(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  return mapped ? mapped[1] : ip
}

export interface IpRules {
  allows(ip: string): boolean
}

/** Deny wins; a non-empty allow list admits only what it lists. */
export function ipRules(allow: string[], deny: string[]): IpRules {
  const allowList = allow.length > 0 ? blockList(allow) : undefined
  const denyList = deny.length > 0 ? blockList(deny) : undefined
  return {
    allows(ip) {
      const address = normalizeIp(ip)
      const version = isIP(address)
      if (version === 0) return allowList === undefined && denyList === undefined
      const family: IpFamily = version === 4 ? 'ipv4' : 'ipv6'
      if (denyList?.check(address, family)) return false
      return allowList === undefined || allowList.check(address, family)
    },
  }
}

/** A name pattern: `*` matches any run of characters (including `/` and `.`); the rest is literal. */
export function namePattern(pattern: string): RegExp {
  const body = pattern
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
    .join('.*')
  return new RegExp(`^${body}$`, 's')
}

export interface NameRules {
  /** Why the name is refused, or undefined when it may pass. */
  refusal(name: string): string | undefined
}

export function nameRules(allow: string[], deny: string[]): NameRules {
  const allowPatterns = allow.map((p) => [p, namePattern(p)] as const)
  const denyPatterns = deny.map((p) => [p, namePattern(p)] as const)
  return {
    refusal(name) {
      const denied = denyPatterns.find(([, re]) => re.test(name))
      if (denied) return `event name "${name}" matches "${denied[0]}" in the webhook's deny_events list`
      if (allowPatterns.length > 0 && !allowPatterns.some(([, re]) => re.test(name))) {
        return `event name "${name}" matches nothing in the webhook's allow_events list (${allow.join(', ')})`
      }
      return undefined
    },
  }
}
