// A `/apps/<name>/...` target that a router could read two ways (an encoded slash or
// backslash, an encoded dot segment, a doubled slash) is refused, so the app routed to and
// the path signed are the one the client named (PROXY-07).

const AMBIGUOUS = /%2f|%5c|%2e|\\|\/\/|\/\.\.?(?:\/|$)|%00/i;

/** True when the path holds something that could route differently than it reads. */
export function isAmbiguousPath(pathname: string): boolean {
  return AMBIGUOUS.test(pathname);
}
