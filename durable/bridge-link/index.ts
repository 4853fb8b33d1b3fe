// BridgeLink (edge mode only): the link to one paired machine's bridge. The machine dials out one
// WebSocket to its instance; the instance sends a fresh challenge, and only a socket whose hello
// is the machine's Ed25519 signature over that challenge carries calls (a replayed hello signs an
// old challenge and takes nothing over). Calls are the rows of BRIDGE_OPERATIONS; a call with no
// proven socket answers unavailable at once, and a socket that closes fails every call it carried.
// The instance named "pairing" keeps the paired machines and their keys (bridgeLinkPairing()).
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { applySchemaSteps, storageSchemaStore } from "../schema-steps";
import { BRIDGE_LINK_SCHEMA_STEPS } from "./schema";
import {
  BridgeFrameSchema,
  freshNonce,
  linkProofMessage,
  LINK_MACHINE_HEADER,
  LINK_ORIGIN_HEADER,
  LINK_PING_FRAME,
  LINK_PONG_FRAME,
  LINK_REPLACED_CLOSE,
  LINK_SILENT_CLOSE,
  LINK_SILENT_MS,
  LINK_SUBPROTOCOL,
  MAX_LINK_FRAME_CHARS,
  MAX_RELAY_BODY_BYTES,
  type BridgeFrame,
  type CarriedBody,
  type EdgeFrame,
  type RelayAnswer,
  type RelayRequest,
} from "../../kernel/contracts/bridge-link";
import { WORK_HEADER } from "../../kernel/contracts/internal-work";
import { bytesOfHex } from "../../kernel/crypto/hex";
import { audit } from "../security-log/audit";
import { bridgeLinkPairing } from "../instances";
import { fromBase64, toBase64 } from "../../kernel/chain/checkpoint";

// Headers of an app backend's call that describe the machine's socket, or that only Cloudflare may
// set at the edge (the client address): never handed on to the backend door.
const DOOR_DROPPED_HEADERS = new Set([
  "host",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "upgrade",
  "content-length",
  "cf-connecting-ip",
  "x-forwarded-for",
  "x-real-ip",
]);

/** The longest an app backend's call may take at the edge (a long-poll for an approval waits up to 30 s). */
const DOOR_CALL_MS = 60_000;

/** What a call over the link came to: the bridge's answer, or why there was none. */
export type LinkCallResult = { ok: true; status: number; body: CarriedBody } | { ok: false; reason: string };

/** What a relay over the link came to: the machine's answer, or why there was none. */
export type LinkRelayResult = { ok: true; answer: RelayAnswer } | { ok: false; reason: string };

/** The pairing instance's answer to a first pairing. */
export type PairResult = { ok: true; pairedAt: string } | { ok: false; reason: "spent" };

/** A paired machine as the owner sees it (the pairing instance's rows). */
export interface PairedMachine {
  machine: string;
  pairedAt: string;
  pairedBy: "pairing_secret" | "pairing_code";
  forgottenAt: string | null;
}

/** The pairing instance's answer to a pairing with a code. */
export type CodePairResult =
  | { ok: true; pairedAt: string }
  | {
      ok: false;
      reason:
        | "not a code created here"
        | "the code was used"
        | "the code expired"
        | "the machine is paired"
        | "the machine was forgotten";
    };

interface SocketState {
  machine: string;
  origin: string;
  nonce: string;
  proven: boolean;
  /** Whether this socket carries the edge's calls (the bridge's link) or only calls back (a command's). */
  serves: boolean;
  /** When the hello was proved (ms): the heartbeat's start before the first ping. */
  provenAt?: number;
}

type Failure = { ok: false; reason: string };

interface Pending {
  socket: WebSocket;
  /** Settles the waiting call with what its answer frame carried (already parsed), or a failure. */
  settle: (result: { ok: true; frame: BridgeFrame } | Failure) => void;
}

export class BridgeLink extends DurableObject<Env> {
  private nextId = 1;
  private pending = new Map<number, Pending>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => applySchemaSteps(storageSchemaStore(ctx.storage), BRIDGE_LINK_SCHEMA_STEPS));
    // The heartbeat is answered without waking this object (and without billing its running time).
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(LINK_PING_FRAME, LINK_PONG_FRAME));
  }

  /** Pairing instance: records the first machine, which spends the pairing secret; any later pairing is refused. */
  async pairFirst(machine: string, publicKey: string, now: number): Promise<PairResult> {
    const sql = this.ctx.storage.sql;
    if (sql.exec("SELECT COUNT(*) AS n FROM machines").one().n !== 0) return { ok: false, reason: "spent" };
    const pairedAt = new Date(now).toISOString();
    sql.exec(
      "INSERT INTO machines (machine, public_key, paired_at, paired_by) VALUES (?, ?, ?, 'pairing_secret')",
      machine,
      publicKey,
      pairedAt,
    );
    return { ok: true, pairedAt };
  }

  /** Pairing instance: keeps a code the owner created (its hash only) until `expiresAt`. */
  async addPairingCode(codeHash: string, now: number, expiresAt: number): Promise<void> {
    this.ctx.storage.sql.exec(
      "INSERT INTO pairing_codes (code_hash, created_at, expires_at, used_by) VALUES (?, ?, ?, NULL)",
      codeHash,
      now,
      expiresAt,
    );
  }

  /** Pairing instance: pairs `machine` with an unused, unexpired code, which it spends; all in one step. */
  async pairWithCode(codeHash: string, machine: string, publicKey: string, now: number): Promise<CodePairResult> {
    const sql = this.ctx.storage.sql;
    const rows = sql.exec("SELECT expires_at, used_by FROM pairing_codes WHERE code_hash = ?", codeHash).toArray();
    if (rows.length === 0) return { ok: false, reason: "not a code created here" };
    if (rows[0]!.used_by !== null) return { ok: false, reason: "the code was used" };
    if (Number(rows[0]!.expires_at) <= now) return { ok: false, reason: "the code expired" };
    const known = sql.exec("SELECT forgotten_at FROM machines WHERE machine = ?", machine).toArray();
    if (known.length > 0)
      return {
        ok: false,
        reason: known[0]!.forgotten_at === null ? "the machine is paired" : "the machine was forgotten",
      };
    const pairedAt = new Date(now).toISOString();
    sql.exec("UPDATE pairing_codes SET used_by = ? WHERE code_hash = ?", machine, codeHash);
    sql.exec(
      "INSERT INTO machines (machine, public_key, paired_at, paired_by) VALUES (?, ?, ?, 'pairing_code')",
      machine,
      publicKey,
      pairedAt,
    );
    return { ok: true, pairedAt };
  }

  /** Pairing instance: a paired machine's public key, or null (never paired, or forgotten). */
  async keyOf(machine: string): Promise<string | null> {
    const rows = this.ctx.storage.sql
      .exec("SELECT public_key FROM machines WHERE machine = ? AND forgotten_at IS NULL", machine)
      .toArray();
    return rows.length === 0 ? null : String(rows[0]!.public_key);
  }

  /**
   * Pairing instance: the machine paired first of those not forgotten, which runs the bridge the
   * worker calls; null before any pairing or once every machine was forgotten.
   */
  async firstMachine(): Promise<string | null> {
    const rows = this.ctx.storage.sql
      .exec("SELECT machine FROM machines WHERE forgotten_at IS NULL ORDER BY paired_at, machine LIMIT 1")
      .toArray();
    return rows.length === 0 ? null : String(rows[0]!.machine);
  }

  /** Pairing instance: every machine ever paired, in pairing order, the forgotten ones marked. */
  async machines(): Promise<PairedMachine[]> {
    return this.ctx.storage.sql
      .exec("SELECT machine, paired_at, paired_by, forgotten_at FROM machines ORDER BY paired_at, machine")
      .toArray()
      .map((row) => ({
        machine: String(row.machine),
        pairedAt: String(row.paired_at),
        pairedBy: row.paired_by === "pairing_code" ? "pairing_code" : "pairing_secret",
        forgottenAt: row.forgotten_at === null ? null : String(row.forgotten_at),
      }));
  }

  /**
   * Pairing instance: forgets a paired machine. Its row stays, marked, so its key never pairs again
   * and the pairing secret stays spent. Answers false for a machine never paired or already forgotten.
   */
  async forget(machine: string, now: number): Promise<boolean> {
    const cursor = this.ctx.storage.sql.exec(
      "UPDATE machines SET forgotten_at = ? WHERE machine = ? AND forgotten_at IS NULL",
      new Date(now).toISOString(),
      machine,
    );
    return cursor.rowsWritten > 0;
  }

  /** Machine instance: closes every socket of a forgotten machine; the calls they carried fail at once. */
  async disconnect(): Promise<void> {
    for (const ws of this.ctx.getWebSockets()) {
      this.failCallsOn(ws, "the owner forgot this machine");
      closeRefused(ws, "the owner forgot this machine");
    }
  }

  /** Machine instance: accepts the machine's socket and challenges it. The worker checked the machine is paired. */
  override async fetch(request: Request): Promise<Response> {
    const machine = request.headers.get(LINK_MACHINE_HEADER) ?? "";
    const origin = request.headers.get(LINK_ORIGIN_HEADER) ?? "";
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    this.ctx.acceptWebSocket(server);
    const state: SocketState = { machine, origin, nonce: freshNonce(), proven: false, serves: false };
    server.serializeAttachment(state);
    send(server, { type: "challenge", nonce: state.nonce });
    return new Response(null, {
      status: 101,
      webSocket: client,
      headers: { "Sec-WebSocket-Protocol": LINK_SUBPROTOCOL },
    });
  }

  /** Machine instance: sends one bridge operation over the proven socket and waits for its answer. */
  async call(operation: string, body: string | null, timeoutMs: number): Promise<LinkCallResult> {
    const result = await this.exchange((id) => ({ type: "call", id, operation, body }), timeoutMs);
    if (!result.ok) return result;
    if (result.frame.type !== "answer") return { ok: false, reason: "the bridge answered a call with another frame" };
    return { ok: true, status: result.frame.status, body: result.frame.body };
  }

  /** Machine instance: relays one request to an app's backend or files on the machine and waits for the answer. */
  async relay(request: RelayRequest, timeoutMs: number): Promise<LinkRelayResult> {
    const result = await this.exchange((id) => ({ type: "relay", id, request }), timeoutMs);
    if (!result.ok) return result;
    if (result.frame.type !== "relay_answer")
      return { ok: false, reason: "the bridge answered a relay with another frame" };
    return { ok: true, answer: result.frame.answer };
  }

  /**
   * Sends one frame numbered by the link over the proven socket and waits for the frame answering
   * that number: unavailable at once with no socket, failed at once when the socket closes, and
   * failed at `timeoutMs`. Never a wait without an end.
   */
  private exchange(
    frameOf: (id: number) => EdgeFrame,
    timeoutMs: number,
  ): Promise<{ ok: true; frame: BridgeFrame } | Failure> {
    const socket = this.provenSocket();
    if (socket === null) return Promise.resolve({ ok: false, reason: "no bridge is connected to this edge" });
    const id = this.nextId++;
    return new Promise((settle) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        settle({ ok: false, reason: `the bridge did not answer within ${timeoutMs} ms` });
      }, timeoutMs);
      this.pending.set(id, {
        socket,
        settle: (result) => {
          clearTimeout(timer);
          this.pending.delete(id);
          settle(result);
        },
      });
      try {
        send(socket, frameOf(id));
      } catch (error) {
        this.pending.get(id)?.settle({ ok: false, reason: `the link failed: ${String(error)}` });
      }
    });
  }

  /** Machine instance: whether a bridge has proved its key on a socket that is still open. */
  async isConnected(): Promise<boolean> {
    return this.provenSocket() !== null;
  }

  /** Machine instance: whether any link of the machine (serving, or a command's) has proved its key and is open. */
  async isLinked(): Promise<boolean> {
    if (this.provenSocket() !== null) return true;
    return this.ctx
      .getWebSockets()
      .some((ws) => (ws.deserializeAttachment() as SocketState).proven && ws.readyState === WebSocket.READY_STATE_OPEN);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const state = ws.deserializeAttachment() as SocketState;
    const frame = readFrame(message);
    if (frame === null) return closeRefused(ws, "a frame that is not the link's");
    if (!state.proven) return this.hello(ws, state, frame);
    if (frame.type === "answer" || frame.type === "relay_answer")
      this.pending.get(frame.id)?.settle({ ok: true, frame });
    else if (frame.type === "callback") await this.callBack(ws, state, frame);
    else if (frame.type === "door") await this.throughAppDoor(ws, state, frame);
    else closeRefused(ws, "a second hello");
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.failCallsOn(ws, "the bridge's link closed");
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, reason);
    } catch {
      // already closed
    }
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.failCallsOn(ws, "the bridge's link failed");
  }

  /** The first frame must be the machine's signature over this socket's challenge; then the socket is the machine's link. */
  private async hello(ws: WebSocket, state: SocketState, frame: BridgeFrame): Promise<void> {
    if (frame.type !== "hello" || frame.machine !== state.machine) return closeRefused(ws, "no hello for this machine");
    const publicKey = await bridgeLinkPairing(this.env).keyOf(state.machine);
    if (
      publicKey === null ||
      !(await verifies(publicKey, frame.signature, linkProofMessage(state.origin, state.machine, state.nonce)))
    ) {
      await audit(this.env, {
        kind: "edge_link_refused",
        outcome: "refused",
        subject: state.machine,
        detail: { reason: "the hello did not sign this socket's challenge with the machine's key" },
        group: "edge_link_unproven",
      });
      return closeRefused(ws, "the hello is not this machine's signature over this challenge");
    }
    // One serving link per machine: a newer one replaces the older, whose calls fail at once.
    if (frame.serves)
      for (const other of this.ctx.getWebSockets()) {
        if (other === ws || !(other.deserializeAttachment() as SocketState).serves) continue;
        this.failCallsOn(other, "the bridge connected again");
        other.close(LINK_REPLACED_CLOSE, "replaced by a newer link of this machine");
      }
    ws.serializeAttachment({
      ...state,
      proven: true,
      serves: frame.serves,
      nonce: "",
      provenAt: Date.now(),
    } satisfies SocketState);
    send(ws, { type: "welcome", machine: state.machine });
    await audit(this.env, {
      kind: "edge_link_connected",
      outcome: "allowed",
      subject: state.machine,
      detail: { serves: frame.serves },
    });
  }

  /** A call back from the bridge: delivered to the worker through its link door, with the internal credential only the edge holds. */
  private async callBack(ws: WebSocket, state: SocketState, frame: Extract<BridgeFrame, { type: "callback" }>) {
    let status = 502;
    let body: string;
    try {
      const answer = await this.env.LINK_DOOR.fetch(
        new Request(`${state.origin}${frame.path}`, {
          method: frame.method,
          headers: {
            // A service binding's request carries no Host of its own; the worker's Host guard reads this one.
            Host: new URL(state.origin).host,
            "X-Internal-Secret": this.env.INTERNAL_SECRET,
            [WORK_HEADER]: frame.work,
            ...(frame.body === null ? {} : { "Content-Type": "application/json" }),
          },
          body: frame.body,
        }),
      );
      status = answer.status;
      body = await answer.text();
    } catch (error) {
      body = JSON.stringify({ error: { code: "bridge_unavailable", message: String(error) } });
    }
    try {
      send(ws, { type: "callback_answer", id: frame.id, status, body });
    } catch {
      // the link closed meanwhile; the bridge's call fails on its side
    }
  }

  /**
   * An app backend's call from the machine: handed to the worker's backend door, where, as at the
   * local backends socket, only an app token counts (an owner carrier or the internal credential
   * is refused there). Only the machine's serving link carries such calls.
   */
  private async throughAppDoor(ws: WebSocket, state: SocketState, frame: Extract<BridgeFrame, { type: "door" }>) {
    if (!state.serves) return closeRefused(ws, "an app's call on a link that serves nothing");
    const { method, target, headers: sent, body } = frame.request;
    let answer: RelayAnswer;
    try {
      const headers = new Headers();
      for (const [name, value] of sent)
        if (!DOOR_DROPPED_HEADERS.has(name.toLowerCase()))
          try {
            headers.append(name, value);
          } catch {
            // a header the Fetch API refuses is dropped
          }
      headers.set("Host", new URL(state.origin).host);
      const bytes = body === null ? null : fromBase64(body);
      const response = await this.env.APP_DOOR.fetch(
        new Request(`${state.origin}${target}`, {
          method,
          headers,
          body: method === "GET" || method === "HEAD" ? null : bytes,
          signal: AbortSignal.timeout(DOOR_CALL_MS),
        }),
      );
      const answered = new Uint8Array(await response.arrayBuffer());
      answer =
        answered.byteLength > MAX_RELAY_BODY_BYTES
          ? doorFailure("the gateway's answer is larger than the link carries")
          : { status: response.status, headers: [...response.headers.entries()], body: toBase64(answered) };
    } catch (error) {
      answer = doorFailure(String(error));
    }
    try {
      send(ws, { type: "door_answer", id: frame.id, answer });
    } catch {
      // the link closed meanwhile; the app's call fails on the machine
    }
  }

  /** The machine's serving socket, if it is open and its heartbeat is recent; a silent one is closed here. */
  private provenSocket(): WebSocket | null {
    for (const ws of this.ctx.getWebSockets()) {
      const state = ws.deserializeAttachment() as SocketState;
      if (!state.serves || ws.readyState !== WebSocket.READY_STATE_OPEN) continue;
      const lastPing = this.ctx.getWebSocketAutoResponseTimestamp(ws)?.getTime() ?? state.provenAt ?? 0;
      if (Date.now() - lastPing <= LINK_SILENT_MS) return ws;
      this.failCallsOn(ws, `the bridge's link was silent for more than ${LINK_SILENT_MS / 1000} s`);
      try {
        ws.close(LINK_SILENT_CLOSE, "no heartbeat");
      } catch {
        // already closing
      }
    }
    return null;
  }

  private failCallsOn(ws: WebSocket, reason: string): void {
    for (const entry of [...this.pending.values()]) if (entry.socket === ws) entry.settle({ ok: false, reason });
  }
}

/** A door call the gateway gave no answer to: 502 bridge_unavailable in the gateway's envelope. */
function doorFailure(reason: string): RelayAnswer {
  const envelope = { error: { code: "bridge_unavailable", message: `The gateway did not answer: ${reason}.` } };
  return {
    status: 502,
    headers: [["content-type", "application/json"]],
    body: toBase64(new TextEncoder().encode(JSON.stringify(envelope))),
  };
}

function send(ws: WebSocket, frame: EdgeFrame): void {
  ws.send(JSON.stringify(frame));
}

function readFrame(message: string | ArrayBuffer): BridgeFrame | null {
  if (typeof message !== "string" || message.length > MAX_LINK_FRAME_CHARS) return null;
  try {
    const parsed = BridgeFrameSchema.safeParse(JSON.parse(message));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function closeRefused(ws: WebSocket, reason: string): void {
  // 1008: policy violation. The reason is ours, never an echo of what the peer sent.
  ws.close(1008, reason.slice(0, 120));
}

async function verifies(publicKeyHex: string, signatureHex: string, message: Uint8Array): Promise<boolean> {
  const key = await crypto.subtle.importKey("raw", bytesOfHex(publicKeyHex), { name: "Ed25519" }, false, ["verify"]);
  return crypto.subtle.verify("Ed25519", key, bytesOfHex(signatureHex), message as Uint8Array<ArrayBuffer>);
}
