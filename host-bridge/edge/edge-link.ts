// The bridge's one outbound link to its paired edge (edge mode). It dials the edge's WebSocket,
// answers the edge's challenge with the machine's signature, then serves the edge's calls: each
// must name a row of BRIDGE_OPERATIONS, and is handed to this machine's own bridge on loopback
// with the local internal credential, so the bridge parses and refuses it exactly as it does a
// local gateway's call. A link that closes is dialled again after a growing pause (0.5 s doubling
// to 30 s, with jitter), and the pause starts over once the edge welcomes the machine.
import { WebSocket, type Dispatcher } from "undici";
import { BRIDGE_OPERATIONS, type BridgeOperationName } from "../../kernel/contracts/bridge-operations";
import {
  EdgeFrameSchema,
  LINK_PATH,
  LINK_PING_FRAME,
  LINK_PING_INTERVAL_MS,
  LINK_REPLACED_CLOSE,
  LINK_SILENT_CLOSE,
  LINK_SILENT_MS,
  LINK_SUBPROTOCOL,
  MAX_LINK_FRAME_CHARS,
  type BridgeFrame,
  type DoorRequest,
  type EdgeFrame,
  type RelayAnswer,
} from "../../kernel/contracts/bridge-link";
import { EDGE_WORK, WORK_HEADER } from "../../kernel/contracts/internal-work";
import { signChallenge, type EdgeRecord } from "./edge-record";
import { serveRelay, type RelayPlaces } from "./link-relay";

export interface EdgeLinkOptions {
  record: EdgeRecord;
  /** This machine's bridge on loopback, and the credential it takes. */
  bridgeUrl: string;
  secret: string;
  dispatcher: Dispatcher | undefined;
  log: (line: string) => void;
  /** Whether this link carries the edge's calls (the bridge's) or only calls back (a command's); default true. */
  serves?: boolean;
  /** Where the edge's relays to apps are delivered (the serving bridge's backends and app folders). */
  relay?: RelayPlaces;
  /** Called at every welcome after the first: the edge may have missed what changed while the link was down. */
  onRelinked?: () => void;
}

export interface EdgeLink {
  /** True while the edge has welcomed this machine on an open socket. */
  isLinked(): boolean;
  /** Resolves at the next welcome (at once when linked now). */
  linked(): Promise<void>;
  /**
   * Calls one internal route of the edge's gateway over the link (the edge adds its own internal
   * credential): its status and body, or null when the link is down or closes first.
   */
  callGateway(
    method: "GET" | "POST",
    path: string,
    work: string,
    body: unknown,
  ): Promise<{ status: number; body: string } | null>;
  /** Sends an app backend's call to the edge's gateway (its backend door): the answer, or null when the link is down or closes first. */
  callDoor(request: DoorRequest): Promise<RelayAnswer | null>;
  stop(): void;
}

const REPLACED_NOTICE =
  "edge link replaced by a newer link of this machine (another bridge with its key); not dialling again";

/** The pause before the next dial: FIRST_PAUSE_MS doubling to LONGEST_PAUSE_MS, with jitter; reset by a welcome. */
function dialBackoff(): { next(): number; reset(): void } {
  let pause = FIRST_PAUSE_MS;
  return {
    next() {
      const wait = Math.round(pause * (0.75 + Math.random() / 2));
      pause = Math.min(pause * 2, LONGEST_PAUSE_MS);
      return wait;
    },
    reset() {
      pause = FIRST_PAUSE_MS;
    },
  };
}

/** Settles every waiting call with `answer` (null: the link closed first) and forgets them. */
function settleAll<T>(waiting: Map<number, (answer: T) => void>, answer: T): void {
  for (const settle of waiting.values()) settle(answer);
  waiting.clear();
}

type AnswerFrame = Extract<EdgeFrame, { type: "callback_answer" | "door_answer" }>;

const FIRST_PAUSE_MS = 500;
const LONGEST_PAUSE_MS = 30_000;

/** Dials the edge and keeps the link up until stop(). */
export function startEdgeLink(options: EdgeLinkOptions): EdgeLink {
  let socket: WebSocket | null = null;
  let isLinked = false;
  let stopped = false;
  const backoff = dialBackoff();
  let timer: NodeJS.Timeout | null = null;
  let waiters: Array<() => void> = [];
  let nextCallback = 1;
  let welcomes = 0;
  const waiting = new Map<number, (answer: AnswerFrame | null) => void>();
  const url = `${options.record.origin.replace(/^https:/, "wss:")}${LINK_PATH}?machine=${options.record.machine}`;

  const dial = () => {
    timer = null;
    if (stopped) return;
    const ws = new WebSocket(url, { protocols: [LINK_SUBPROTOCOL], dispatcher: options.dispatcher });
    socket = ws;
    let ended = false;
    const heartbeat = keepHeartbeat(ws, () =>
      end(LINK_SILENT_CLOSE, `no answer for more than ${LINK_SILENT_MS / 1000} s`),
    );
    ws.addEventListener("message", (event) => {
      heartbeat.heard();
      const frame = readFrame(event.data);
      if (frame === null) return ws.close(1008, "a frame that is not the link's");
      void onFrame(ws, frame);
    });
    const end = (code: number, reason: string) => {
      if (ended) return;
      ended = true;
      heartbeat.stop();
      if (socket === ws) socket = null;
      settleAll(waiting, null);
      const wasLinked = isLinked;
      isLinked = false;
      if (stopped) return;
      if (code === LINK_REPLACED_CLOSE) {
        stopped = true;
        return options.log(REPLACED_NOTICE);
      }
      const wait = backoff.next();
      options.log(
        `edge link ${wasLinked ? "lost" : "refused or unreachable"} (close ${code}${reason ? `: ${reason}` : ""}); dialling again in ${wait} ms`,
      );
      timer = setTimeout(dial, wait);
    };
    ws.addEventListener("close", (event) => end(event.code, event.reason));
    // An error is followed by close, which schedules the next dial.
    ws.addEventListener("error", () => undefined);
  };

  const onFrame = async (ws: WebSocket, frame: EdgeFrame) => {
    switch (frame.type) {
      case "challenge":
        return send(ws, {
          type: "hello",
          machine: options.record.machine,
          signature: signChallenge(options.record, frame.nonce),
          serves: options.serves ?? true,
        });
      case "welcome":
        if (welcomes++ > 0) options.onRelinked?.();
        isLinked = true;
        backoff.reset();
        options.log(`edge link up: ${options.record.origin} as machine ${options.record.machine}`);
        for (const wake of waiters) wake();
        waiters = [];
        return;
      case "call":
        // A command's link serves nothing, whatever the edge asks.
        if (options.serves === false) return;
        return send(ws, await serveCall(options, frame));
      case "relay":
        if (options.serves === false || options.relay === undefined) return;
        return send(ws, { type: "relay_answer", id: frame.id, answer: await serveRelay(options.relay, frame.request) });
      case "pong":
        return;
      case "callback_answer":
      case "door_answer":
        waiting.get(frame.id)?.(frame);
        waiting.delete(frame.id);
        return;
    }
  };

  /** Sends one numbered frame and waits for the frame answering it; null at once when not linked. */
  const ask = <T>(frameOf: (id: number) => BridgeFrame, read: (answer: AnswerFrame) => T | null): Promise<T | null> => {
    const ws = socket;
    if (!isLinked || ws === null) return Promise.resolve(null);
    const id = nextCallback++;
    return new Promise((settle) => {
      waiting.set(id, (answer) => settle(answer === null ? null : read(answer)));
      send(ws, frameOf(id));
    });
  };

  dial();
  return {
    isLinked: () => isLinked,
    linked: () => (isLinked ? Promise.resolve() : new Promise<void>((wake) => waiters.push(wake))),
    callGateway: (method, path, work, body) =>
      ask(
        (id) => ({ type: "callback", id, method, path, work, body: body === undefined ? null : JSON.stringify(body) }),
        (answer) => (answer.type === "callback_answer" ? { status: answer.status, body: answer.body } : null),
      ),
    // A command's link carries no app's call.
    callDoor: (request) =>
      options.serves === false
        ? Promise.resolve(null)
        : ask(
            (id) => ({ type: "door", id, request }),
            (answer) => (answer.type === "door_answer" ? answer.answer : null),
          ),
    stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      socket?.close(1000, "the bridge stops");
    },
  };
}

/**
 * The link's heartbeat (kernel/contracts/bridge-link.ts): a ping each LINK_PING_INTERVAL_MS, and a
 * link that answers nothing for LINK_SILENT_MS (a path that died without a close, a frozen edge)
 * is closed and reported silent at once, since its close may never come.
 */
function keepHeartbeat(ws: WebSocket, onSilent: () => void): { heard(): void; stop(): void } {
  let heardAt = Date.now();
  const timer = setInterval(() => {
    if (ws.readyState !== WebSocket.OPEN) return;
    if (Date.now() - heardAt <= LINK_SILENT_MS) return ws.send(LINK_PING_FRAME);
    ws.close(LINK_SILENT_CLOSE, "no heartbeat");
    onSilent();
  }, LINK_PING_INTERVAL_MS);
  timer.unref();
  return { heard: () => (heardAt = Date.now()), stop: () => clearInterval(timer) };
}

/** Serves one call of the edge on this machine's bridge; an operation the contract does not list is refused here. */
export async function serveCall(
  options: EdgeLinkOptions,
  frame: Extract<EdgeFrame, { type: "call" }>,
): Promise<BridgeFrame> {
  const refuse = (status: number, code: string, message: string): BridgeFrame => ({
    type: "answer",
    id: frame.id,
    status,
    body: { text: JSON.stringify({ error: { code, message } }) },
  });
  if (!Object.hasOwn(BRIDGE_OPERATIONS, frame.operation))
    return refuse(404, "not_found", "The bridge has no such operation.");
  const contract = BRIDGE_OPERATIONS[frame.operation as BridgeOperationName];
  try {
    const answer = await fetch(`${options.bridgeUrl}${frame.operation.slice(contract.method.length + 1)}`, {
      method: contract.method,
      headers: {
        "X-Internal-Secret": options.secret,
        [WORK_HEADER]: EDGE_WORK,
        "Content-Type": "application/json",
      },
      body: frame.body ?? undefined,
      redirect: "manual",
    });
    const bytes = Buffer.from(await answer.arrayBuffer());
    const isJson = (answer.headers.get("content-type") ?? "").includes("json");
    return {
      type: "answer",
      id: frame.id,
      status: answer.status,
      body: isJson ? { text: bytes.toString("utf8") } : { base64: bytes.toString("base64") },
    };
  } catch (error) {
    return refuse(502, "bridge_unavailable", `The bridge did not answer: ${String(error)}`);
  }
}

function send(ws: WebSocket, frame: BridgeFrame): void {
  if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(frame));
}

function readFrame(data: unknown): EdgeFrame | null {
  if (typeof data !== "string" || data.length > MAX_LINK_FRAME_CHARS) return null;
  try {
    const parsed = EdgeFrameSchema.safeParse(JSON.parse(data));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
