import { isIPv4, isIPv6 } from 'node:net'

/**
 * What per-address login limits count by: an IPv4 address as it is (an IPv4-mapped IPv6 address
 * as its IPv4 form), an IPv6 address by its /64 prefix (`2001:db8:1:2::/64`). One IPv6 subscriber
 * usually holds a whole /64, so counting single addresses would let one host rotate through 2^64
 * of them. Anything else (a unix socket, an unparsable forwarded value) is kept as it is.
 */
export function clientAddressKey(address: string): string {
  if (isIPv4(address) || !isIPv6(address)) return address
  const bare = address.replace(/%.*$/, '')
  const groups = hextets(bare)
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a trailing dotted IPv4 part converted). */
function hextets(address: string): number[] {
  const parse = (part: string): number[] => {
    if (part === '') return []
    return part.split(':').flatMap((field) => {
      if (field.includes('.')) {
        const [a, b, c, d] = field.split('.').map(Number) as [number, number, number, number]
        return [(a << 8) | b, (c << 8) | d]
      }
      return [parseInt(field, 16)]
    })
  }
  const [head, tail] = address.split('::') as [string, string | undefined]
  if (tail === undefined) return parse(head)
  const front = parse(head)
  const back = parse(tail)
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back]
}
