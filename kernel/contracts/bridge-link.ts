// The link between an edge worker and a paired machine's bridge (edge mode): the bridge dials out
// one WebSocket to the machine's BridgeLink Durable Object and, once it has proved its Ed25519
// key against a fresh challenge, serves the rows of BRIDGE_OPERATIONS over it and sends its
// calls back (GATEWAY_CALLBACKS) over it. Every frame either side sends is one of these schemas;
// the side that receives a frame parses it. Imports nothing but zod and its siblings.
import { z } from "zod";
import { bytesOfHex, hexOf, sha256Hex } from "../crypto/hex";
import { APP_NAME_PATTERN } from "../rules/app-name";

/** Headers the worker's connect route hands a BridgeLink: the machine that dials and the edge's origin. */
export const LINK_MACHINE_HEADER = "X-PersonalClaw-Link-Machine";
export const LINK_ORIGIN_HEADER = "X-PersonalClaw-Link-Origin";

/** The WebSocket subprotocol of the link; a connect that does not offer it is refused. */
export const LINK_SUBPROTOCOL = "personalclaw.link.v1";

/** The path a bridge dials (GET, Upgrade: websocket) and the one it pairs at (POST). */
export const LINK_PATH = "/api/edge/link";
export const PAIR_PATH = "/api/edge/pair";
/** Where the signed-in owner creates a one-time code that pairs one more machine (POST). */
export const PAIRING_CODES_PATH = "/api/edge/pairing-codes";

/** How long a pairing code the owner created stays good. */
export const PAIRING_CODE_TTL_MS = 10 * 60 * 1000;

/** A pairing code: 20 base32 characters (100 random bits) in groups of four. */
export const PairingCodeSchema = z.string().regex(/^[A-Z2-7]{4}(-[A-Z2-7]{4}){4}$/);

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
/** A fresh pairing code. */
export function freshPairingCode(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(20));
  const chars = [...bytes].map((b) => BASE32[b % 32]).join("");
  return chars.match(/.{4}/g)!.join("-");
}

/** The answer to creating a pairing code: shown once, kept at the edge only as its hash. */
export const PairingCodeAnswerSchema = z.strictObject({ code: PairingCodeSchema, expires_at: z.string() });

const Hex = (bytes: number) => z.string().regex(new RegExp(`^[0-9a-f]{${2 * bytes}}$`));
/** A machine's Ed25519 public key: its 32 raw bytes in lower-case hex. */
export const MachinePublicKeySchema = Hex(32);
/** A machine's id: the first 16 bytes of the SHA-256 of its public key, in hex. */
export const MachineIdSchema = Hex(16);

/**
 * The body of POST /api/edge/pair: the machine's public key with the one-time pairing secret (the
 * first machine) or with a pairing code the signed-in owner created (each further machine).
 */
export const PairRequestSchema = z.union([
  z.strictObject({ pairing_secret: z.string().min(1).max(512), public_key: MachinePublicKeySchema }),
  z.strictObject({ pairing_code: PairingCodeSchema, public_key: MachinePublicKeySchema }),
]);
export type PairRequest = z.infer<typeof PairRequestSchema>;

export const PairAnswerSchema = z.strictObject({ machine: MachineIdSchema, paired_at: z.string() });
export type PairAnswer = z.infer<typeof PairAnswerSchema>;

/** Where the signed-in owner lists the paired machines (GET), and forgets one (POST <path>/<machine>/forget). */
export const MACHINES_PATH = "/api/edge/machines";

/** One paired machine as the owner sees it: whether it runs the edge's apps, is linked now, or was forgotten. */
export const MachineViewSchema = z.strictObject({
  machine: MachineIdSchema,
  paired_at: z.string(),
  paired_by: z.enum(["pairing_secret", "pairing_code"]),
  /** The machine the edge's calls, installs and apps go to: the first paired of those not forgotten. */
  runs_apps: z.boolean(),
  /** Whether a link of the machine has proved its key and is open now. */
  connected: z.boolean(),
  forgotten_at: z.string().nullable(),
});
export const MachinesAnswerSchema = z.strictObject({ machines: z.array(MachineViewSchema) });

/** The id of the machine holding `publicKeyHex`: the key names the machine, so no second name can be claimed for it. */
export async function machineIdOf(publicKeyHex: string): Promise<string> {
  return (await sha256Hex(bytesOfHex(publicKeyHex))).slice(0, 32);
}

/**
 * The bytes a machine signs to connect: the link's version, the edge's public origin, the machine
 * and the challenge the edge sent on this socket. A signature over one socket's challenge proves
 * nothing on another, and one made for another edge proves nothing on this one.
 */
export function linkProofMessage(origin: string, machine: string, nonce: string): Uint8Array {
  return new TextEncoder().encode(`${LINK_SUBPROTOCOL}\n${origin}\n${machine}\n${nonce}`);
}

/** A fresh challenge: 32 random bytes in hex. */
export function freshNonce(): string {
  return hexOf(crypto.getRandomValues(new Uint8Array(32)));
}

const CallId = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
/** A body crossing the link: JSON text, or bytes in base64 (a backup archive). */
const CarriedBody = z.strictObject({ text: z.string() }).or(z.strictObject({ base64: z.string() }));
export type CarriedBody = z.infer<typeof CarriedBody>;

/**
 * The most bytes a relayed request or answer body may hold (an app backend's exchange, or one UI
 * file). Bodies cross the link whole, in base64, never streamed: an answer larger than this is
 * refused by the bridge (502 at the edge), and a request body is already capped by the proxy.
 */
export const MAX_RELAY_BODY_BYTES = 16 * 1024 * 1024;

/** Header pairs crossing the link with a relay, in order (a name may repeat, as Set-Cookie does). */
const RelayHeaders = z.array(z.tuple([z.string().max(256), z.string().max(16 * 1024)])).max(256);

/**
 * Where a relay goes on the machine: the app's running backend (a signed request the edge's proxy
 * built, sent as it is), or one file of the app's installed copy (a UI file, which the edge then
 * checks against the bytes listed at install).
 */
export const RelayTargetSchema = z.enum(["backend", "app_file"]);

/** One relayed request: what the edge's proxy would have sent a local backend or disk service. */
export const RelayRequestSchema = z.strictObject({
  app: z.string().regex(APP_NAME_PATTERN),
  to: RelayTargetSchema,
  method: z.enum(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]),
  /** The path and query: on the backend (`/api/...?q`), or inside the app's folder (`ui/index.html`). */
  target: z.string().min(1).max(8192),
  headers: RelayHeaders,
  /** The body's bytes in base64, or null for none. */
  body: z
    .string()
    .max(Math.ceil(MAX_RELAY_BODY_BYTES / 3) * 4 + 4)
    .nullable(),
});
export type RelayRequest = z.infer<typeof RelayRequestSchema>;

/**
 * What the machine answered a relay: the backend's (or file's) status, headers and bytes in
 * base64; or, when nothing answered, the refusal the edge raises in its own name.
 */
export const RelayAnswerSchema = z.strictObject({
  status: z.number().int().min(100).max(599),
  headers: RelayHeaders,
  body: z.string(),
  refused: z.enum(["app_backend_unavailable", "app_answer_too_large", "app_ui_not_found"]).optional(),
});
export type RelayAnswer = z.infer<typeof RelayAnswerSchema>;

/**
 * One call an app's backend on the machine makes to the gateway (raising an approval, reading its
 * config): what it sent to the gateway's socket in its sandbox. The edge hands it to the worker's
 * backend door, where, as locally, only an app token counts.
 */
export const DoorRequestSchema = RelayRequestSchema.omit({ app: true, to: true }).extend({
  target: z.string().startsWith("/").max(8192),
});
export type DoorRequest = z.infer<typeof DoorRequestSchema>;

/** Frames the edge sends the bridge. */
export const EdgeFrameSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("challenge"), nonce: Hex(32) }),
  z.strictObject({ type: z.literal("welcome"), machine: MachineIdSchema }),
  /** One bridge operation: its row's name ("POST /apps/stage") and its request, as JSON text. */
  z.strictObject({ type: z.literal("call"), id: CallId, operation: z.string().max(200), body: z.string().nullable() }),
  /** One request for an app's backend or one of its files (RelayRequestSchema). */
  z.strictObject({ type: z.literal("relay"), id: CallId, request: RelayRequestSchema }),
  /** The gateway's answer to an app backend's call (a `door` frame), as RelayAnswerSchema. */
  z.strictObject({ type: z.literal("door_answer"), id: CallId, answer: RelayAnswerSchema }),
  /** The edge's automatic answer to the bridge's heartbeat (LINK_PONG_FRAME). */
  z.strictObject({ type: z.literal("pong") }),
  /** The gateway's answer to one of the bridge's calls back. */
  z.strictObject({ type: z.literal("callback_answer"), id: CallId, status: z.number().int(), body: z.string() }),
]);
export type EdgeFrame = z.infer<typeof EdgeFrameSchema>;

/** Frames the bridge sends the edge. */
export const BridgeFrameSchema = z.discriminatedUnion("type", [
  /**
   * The machine's signature over this socket's challenge. `serves`: the socket carries the edge's
   * calls (the bridge's link, one per machine: a newer one replaces the older); false for a
   * command's short link that only calls back (`personalclaw token --edge`).
   */
  z.strictObject({ type: z.literal("hello"), machine: MachineIdSchema, signature: Hex(64), serves: z.boolean() }),
  /** The bridge's answer to a call: the status and body its operation answered. */
  z.strictObject({ type: z.literal("answer"), id: CallId, status: z.number().int(), body: CarriedBody }),
  /** The machine's answer to a relay. */
  z.strictObject({ type: z.literal("relay_answer"), id: CallId, answer: RelayAnswerSchema }),
  /** An app backend's call to the gateway, on a serving link only. */
  z.strictObject({ type: z.literal("door"), id: CallId, request: DoorRequestSchema }),
  /** A call back to the gateway: one internal route, the work it names, its JSON body. */
  z.strictObject({
    type: z.literal("callback"),
    id: CallId,
    method: z.enum(["GET", "POST"]),
    path: z.string().startsWith("/api/").max(2000),
    work: z.string().max(64),
    body: z.string().nullable(),
  }),
]);
export type BridgeFrame = z.infer<typeof BridgeFrameSchema>;

/**
 * The link's heartbeat. The bridge sends LINK_PING_FRAME every LINK_PING_INTERVAL_MS; the edge
 * answers LINK_PONG_FRAME without waking its Durable Object (an automatic response). A link with
 * no pong for LINK_SILENT_MS is dead to the bridge, which drops it and dials again; a serving link
 * with no ping for as long is dead to the edge, which closes it and answers its calls
 * bridge_unavailable at once instead of sending them into it.
 */
export const LINK_PING_FRAME = '{"type":"ping"}';
export const LINK_PONG_FRAME = '{"type":"pong"}';
export const LINK_PING_INTERVAL_MS = 5_000;
export const LINK_SILENT_MS = 15_000;

/** The close code of a link one side found silent past LINK_SILENT_MS. */
export const LINK_SILENT_CLOSE = 4002;

/** The close code of a serving link another serving link of the same machine replaced: it does not dial again. */
export const LINK_REPLACED_CLOSE = 4001;

/** The largest frame either side accepts, in characters (a backup archive crosses in one). */
export const MAX_LINK_FRAME_CHARS = 32 * 1024 * 1024;
