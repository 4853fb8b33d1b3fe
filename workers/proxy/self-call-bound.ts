// An app backend holds its own app token, so it can call `/apps/<own name>/api/...`, whose
// handler calls it again: without a bound one request recurses until something falls over.
// A hop counter the backend is asked to send back cannot bound it (a backend that drops the
// header starts again at zero), so the gateway counts for itself: every call an app makes
// through its own proxy with its token alone is in flight from the moment it is forwarded
// until its answer's body ends, and a chain of nested calls is that many calls in flight at
// once. Past the limit the call is refused (508 `app_proxy_loop`) and the chain unwinds.
// workerd runs the gateway in one isolate, so this module's memory is the gateway's.
import { GatewayError } from "../../kernel/contracts/errors";

/** How many of an app's calls through its own proxy may be in flight at once. */
export const SELF_CALL_LIMIT = 8;

/** An entry older than this is dropped, so a stream the runtime never closed cannot hold a slot forever. */
const STALE_MS = 10 * 60 * 1000;

const inFlight = new Map<string, Set<{ since: number }>>();

/** A slot taken for one self-call: its 1-based depth, and release() (idempotent). */
export interface SelfCallSlot {
  depth: number;
  release: () => void;
}

/** Takes a slot for a call `app` makes through its own proxy, or refuses it past the limit. */
export function enterSelfCall(app: string, now: number): SelfCallSlot {
  const calls = inFlight.get(app) ?? new Set();
  for (const call of calls) if (now - call.since > STALE_MS) calls.delete(call);
  if (calls.size >= SELF_CALL_LIMIT)
    throw new GatewayError("app_proxy_loop", { vars: { name: app, limit: SELF_CALL_LIMIT } });
  const call = { since: now };
  calls.add(call);
  inFlight.set(app, calls);
  return {
    depth: calls.size,
    release: () => {
      calls.delete(call);
      if (calls.size === 0 && inFlight.get(app) === calls) inFlight.delete(app);
    },
  };
}

/** `body` unchanged for the client, with `release` called once when it ends, fails or is cancelled. */
export function releasedWhenDone(
  body: ReadableStream<Uint8Array> | null,
  release: () => void,
): ReadableStream<Uint8Array> | null {
  if (body === null) {
    release();
    return null;
  }
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          release();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        release();
        controller.error(error);
      }
    },
    cancel(reason) {
      release();
      return reader.cancel(reason);
    },
  });
}
