// A `/apps/<name>/...` target that a router could read two ways (an encoded slash or
// backslash, an encoded dot segment, a doubled slash) is refused, so the app routed to and
// the path signed are the one the client named (PROXY-07). The rule itself is the gateway's
// one path rule (guards/request-path.ts), which already refused such a request before
// routing; this is the proxy's own check that it only ever forwards what that rule accepts.
import { pathAmbiguity } from "../guards/request-path";

/** True when the path holds something that could route differently than it reads. */
export function isAmbiguousPath(pathname: string): boolean {
  return pathAmbiguity(pathname) !== null;
}
