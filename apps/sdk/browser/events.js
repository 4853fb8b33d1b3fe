// PersonalClaw app SDK, browser part: live platform events for an app's UI page.
//
//   import { connectEvents } from "./personalclaw-events.js";   // copy this file into your ui/
//   const events = connectEvents();
//   events.on("backend.health_changed", (data) => { ... });      // data is identifiers only
//
// An app page runs sandboxed in an opaque origin with no cookie; the gateway handed it its app
// token as `?app_token=`. The socket offers that token as the subprotocol
// `personalclaw.bearer.<token>` (a browser's WebSocket cannot send Authorization, and a token in
// the socket's URL would land in logs). The page hears only the events its manifest's
// `permissions.events` names, and only while it still names them; "*" handlers get every frame.

const SUBPROTOCOL = "personalclaw.events.v1";
const BEARER_PREFIX = "personalclaw.bearer.";

/**
 * Connects to the gateway's /api/ws and reconnects with backoff (1 s doubling to 30 s) until
 * `close()`. A socket the gateway closes with 4403 (the app was disabled or removed) is not
 * retried. Answers `{on(name, fn), off(name, fn), close(), state()}`.
 */
export function connectEvents(options = {}) {
  const token = options.token ?? new URLSearchParams(location.search).get("app_token");
  const url = options.url ?? `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/api/ws`;
  const handlers = new Map();
  let socket = null;
  let delay = 1000;
  let timer = null;
  let isClosed = false;
  let state = "connecting";

  function dispatch(frame) {
    for (const key of [frame.type, "*"]) {
      for (const fn of handlers.get(key) ?? []) {
        try {
          fn(frame.data, frame.type);
        } catch (error) {
          console.error(error);
        }
      }
    }
  }

  function open() {
    if (isClosed || !token) return;
    socket = new WebSocket(url, [SUBPROTOCOL, BEARER_PREFIX + token]);
    socket.addEventListener("open", () => {
      state = "live";
      delay = 1000;
    });
    socket.addEventListener("message", (event) => {
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return;
      }
      if (frame && typeof frame.type === "string" && frame.data && typeof frame.data === "object") dispatch(frame);
    });
    socket.addEventListener("close", (event) => {
      socket = null;
      if (isClosed) return;
      if (event.code === 4403) {
        state = "revoked";
        return;
      }
      state = "offline";
      timer = setTimeout(open, delay);
      delay = Math.min(delay * 2, 30_000);
    });
  }

  open();
  return {
    on(name, fn) {
      if (!handlers.has(name)) handlers.set(name, new Set());
      handlers.get(name).add(fn);
      return this;
    },
    off(name, fn) {
      handlers.get(name)?.delete(fn);
      return this;
    },
    close() {
      isClosed = true;
      clearTimeout(timer);
      socket?.close(1000);
    },
    state: () => (token ? state : "no_token"),
  };
}
