// The dashboard's one live-event socket (GET /api/ws, same origin, the session cookie rides
// along). Frames are {type, data}; each names what changed and the dashboard re-reads that
// part through the API, so a frame never carries anything to render. When the socket drops,
// it reconnects with backoff (1 s doubling to 30 s) and the header says the page is offline.
import { el } from "./element.js";

const FIRST_DELAY_MS = 1000;
const LONGEST_DELAY_MS = 30_000;
const SUBPROTOCOL = "personalclaw.events.v1";

/**
 * Opens the socket and keeps it open until `stop()`. `onFrame(frame)` gets each parsed frame;
 * `indicator` is an element whose text and data-state say "live", "connecting" or "offline".
 */
export function connectLiveEvents(onFrame) {
  const indicator = el("span", {
    class: "badge badge-neutral live-indicator",
    id: "live-indicator",
    role: "status",
    "data-state": "connecting",
    text: "Connecting…",
  });
  let socket = null;
  let delay = FIRST_DELAY_MS;
  let timer = null;
  let isStopped = false;
  let hasBeenLive = false;

  function show(state) {
    indicator.dataset.state = state;
    indicator.textContent = state === "live" ? "Live" : state === "offline" ? "Offline — reconnecting" : "Connecting…";
    indicator.className = `badge live-indicator ${state === "live" ? "badge-ok" : state === "offline" ? "badge-bad" : "badge-neutral"}`;
  }

  function open() {
    if (isStopped) return;
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    socket = new WebSocket(`${scheme}//${location.host}/api/ws`, [SUBPROTOCOL]);
    socket.addEventListener("open", () => {
      delay = FIRST_DELAY_MS;
      show("live");
      // Whatever changed while the page was offline: every section reads itself once.
      if (hasBeenLive) onFrame({ type: "hub.reconnected", data: {} });
      hasBeenLive = true;
    });
    socket.addEventListener("message", (event) => {
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return;
      }
      if (frame && typeof frame.type === "string" && frame.data && typeof frame.data === "object") onFrame(frame);
    });
    socket.addEventListener("close", () => {
      socket = null;
      if (isStopped) return;
      show("offline");
      // The socket also ends when this session does: the page asks the API, which sends it to sign-in if so.
      onFrame({ type: "hub.offline", data: {} });
      timer = setTimeout(open, delay);
      delay = Math.min(delay * 2, LONGEST_DELAY_MS);
    });
  }

  open();
  return {
    indicator,
    stop() {
      isStopped = true;
      clearTimeout(timer);
      indicator.remove();
      socket?.close(1000);
    },
  };
}
