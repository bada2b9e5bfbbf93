/**
 * Whether a request carries more than one Host header line. RFC 9112 §3.2 requires a 400 for that, and
 * Node's parser lets it through with the first value in `headers.host`: a proxy in front that routes on
 * another line than the one Gatehouse decides on would get one app's decision applied to another's
 * request. Reads the raw header lines once, without building anything (it runs on every request).
 */
export function hasRepeatedHost(rawHeaders: readonly string[]): boolean {
  let seen = false;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index]!;
    if (name.length !== 4 || name.toLowerCase() !== 'host') continue;
    if (seen) return true;
    seen = true;
  }
  return false;
}
