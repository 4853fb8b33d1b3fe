// The bridge's calls back under `start --edge` (docs/design/bridge-contract.md): the machine runs
// no gateway the edge reads, so health reports, security-log rows, install progress and the
// start's questions go to the edge's gateway over the machine's link. Kept apart from the link
// itself so a plain start does not load the link's WebSocket library.
import type { CallGateway } from "../bridge-contract";
import type { EdgeLink } from "./edge-link";

/** How long a call back waits for a link that is down (a start before the first welcome, a redial) before it fails. */
export const CALL_BACK_LINK_WAIT_MS = 10_000;

/**
 * The bridge's calls back when its machine runs `start --edge`: over the link (named `cli:bridge`,
 * as on loopback), to the edge's gateway. A call made while the link is down waits for it up to
 * CALL_BACK_LINK_WAIT_MS (not at all while the gateway stops), then fails as an unreachable
 * gateway does (502), never hangs.
 */
export function callBackOverLink(linkOf: () => EdgeLink | null, isStopping: () => boolean): CallGateway {
  return async (method, path, body) => {
    const link = linkOf();
    if (link === null || (method !== "GET" && method !== "POST")) return { status: 502, body: null };
    // A stopping gateway does not wait for a link to come back: its stop is bounded.
    if (!link.isLinked() && !isStopping()) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        link.linked(),
        new Promise((wake) => (timer = setTimeout(wake, CALL_BACK_LINK_WAIT_MS).unref())),
      ]);
      clearTimeout(timer);
    }
    const answer = await link.callGateway(method, path, "cli:bridge", body);
    if (answer === null) return { status: 502, body: null };
    try {
      return { status: answer.status, body: JSON.parse(answer.body) as unknown };
    } catch {
      return { status: answer.status, body: null };
    }
  };
}
