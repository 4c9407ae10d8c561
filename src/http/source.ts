/**
 * Where a request comes from, as the per-source limits key it (sign-in throttles, public endpoints' rate limits):
 * an IPv4 address as is, an IPv6 address by its /64 prefix (one customer network; a host picks any address inside
 * it at will), anything else as sent.
 */
export function requestSource(ip: string): string {
  if (!ip.includes(':')) return ip;
  const [head = '', tail] = ip.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
