// Edge-mode routes: pairing a machine with the one-time pairing secret, and the WebSocket a paired
// machine's bridge dials (durable/bridge-link). Both are reachable by anyone on the internet, so
// each refuses everything but its one proof: the secret for the first pairing, the machine's key
// over a fresh challenge for a link. A local gateway answers both edge_mode_off.
import { z } from "zod";
import { GatewayError } from "../../kernel/contracts/errors";
import {
  LINK_MACHINE_HEADER,
  LINK_ORIGIN_HEADER,
  LINK_PATH,
  LINK_SUBPROTOCOL,
  MACHINES_PATH,
  MachinesAnswerSchema,
  machineIdOf,
  MachineIdSchema,
  PAIR_PATH,
  PairAnswerSchema,
  PAIRING_CODE_TTL_MS,
  PAIRING_CODES_PATH,
  PairingCodeAnswerSchema,
  PairRequestSchema,
  freshPairingCode,
} from "../../kernel/contracts/bridge-link";
import { sha256Hex } from "../../kernel/crypto/hex";
import { assertOwnerPresence } from "../guards/owner-presence";
import { bridgeLinkOf, bridgeLinkPairing } from "../../durable/instances";
import { equalsInConstantTime } from "../guards/constant-time";
import { publicOriginOf } from "../guards/public-origin";
import type { PublicOrigin } from "../../kernel/rules/public-origin";
import { route, type AnyRouteRow } from "../route-row";
import type { Env } from "../../durable/env";

function edgeOrigin(env: Env): PublicOrigin {
  const setting = publicOriginOf(env);
  if (setting.mode !== "edge") throw new GatewayError("edge_mode_off");
  return setting.public;
}

/** The paired machines as the owner sees them (MachinesAnswerSchema). */
async function machinesAnswer(env: Env): Promise<Response> {
  const pairing = bridgeLinkPairing(env);
  const [machines, first] = await Promise.all([pairing.machines(), pairing.firstMachine()]);
  const views = await Promise.all(
    machines.map(async (m) => ({
      machine: m.machine,
      paired_at: m.pairedAt,
      paired_by: m.pairedBy,
      runs_apps: m.machine === first,
      connected: m.forgottenAt === null && (await bridgeLinkOf(env, m.machine).isLinked()),
      forgotten_at: m.forgottenAt,
    })),
  );
  return noStoreJson({ machines: views });
}

/** A JSON answer no cache keeps (it names machines, or carries a pairing code). */
function noStoreJson(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store" },
  });
}

export const edgeRoutes: AnyRouteRow[] = [
  route({
    method: "POST",
    path: PAIR_PATH,
    family: "edge",
    authz: {
      kind: "bootstrap",
      why: "the one-time pairing secret or an owner's one-time pairing code in the body is the credential; the machine it pairs spends it",
    },
    internal: false,
    body: PairRequestSchema,
    contract:
      "Pairs a machine with this edge worker: the body carries the machine's Ed25519 public key and either the pairing secret set at deploy (PERSONALCLAW_PAIRING_SECRET, the first machine) or a pairing code the signed-in owner created (each further machine); the answer names the machine (derived from its key). The secret pairs one machine only: a wrong, unset or spent secret is 403 edge_pairing_refused; a code not created here, used or expired is 403 edge_pairing_code_refused; a local gateway answers 404 edge_mode_off.",
    answer: { status: 201, schema: PairAnswerSchema },
    refuses: ["edge_mode_off", "edge_pairing_refused", "edge_pairing_code_refused"],
    async handle({ env, body, now, audit }) {
      edgeOrigin(env);
      const machine = await machineIdOf(body.public_key);
      const paired = (pairedAt: string) =>
        new Response(JSON.stringify({ machine, paired_at: pairedAt }), {
          status: 201,
          headers: { "Content-Type": "application/json" },
        });
      if ("pairing_code" in body) {
        const codeHash = await sha256Hex(new TextEncoder().encode(body.pairing_code));
        const result = await bridgeLinkPairing(env).pairWithCode(codeHash, machine, body.public_key, now);
        if (!result.ok) {
          await audit({
            kind: "edge_pairing_refused",
            outcome: "refused",
            subject: machine,
            detail: { reason: result.reason },
            group: `POST ${PAIR_PATH} ${result.reason}`,
          });
          throw new GatewayError("edge_pairing_code_refused");
        }
        await audit({
          kind: "edge_machine_paired",
          outcome: "allowed",
          subject: machine,
          detail: { paired_by: "pairing_code" },
        });
        return paired(result.pairedAt);
      }
      const configured = env.PERSONALCLAW_PAIRING_SECRET ?? "";
      const refuse = async (reason: string) => {
        // Grouped by reason, not by key: a flood of guesses, each with a fresh key, is one row and a count.
        await audit({
          kind: "edge_pairing_refused",
          outcome: "refused",
          subject: machine,
          detail: { reason },
          group: `POST ${PAIR_PATH} ${reason}`,
        });
        return new GatewayError("edge_pairing_refused");
      };
      if (configured === "" || !equalsInConstantTime(body.pairing_secret, configured))
        throw await refuse(configured === "" ? "no pairing secret is set" : "not the pairing secret");
      const pairedFirst = await bridgeLinkPairing(env).pairFirst(machine, body.public_key, now);
      if (!pairedFirst.ok) throw await refuse("the pairing secret was spent");
      await audit({ kind: "edge_machine_paired", outcome: "allowed", subject: machine });
      return paired(pairedFirst.pairedAt);
    },
  }),
  route({
    method: "POST",
    path: PAIRING_CODES_PATH,
    family: "edge",
    authz: { kind: "owner" },
    internal: false,
    body: z.strictObject({}),
    contract:
      "The signed-in owner creates a one-time code that pairs one more machine with this edge (personalclaw edge pair <url> --code), good for 10 minutes; only its hash is kept. Needs a sign-in in the last 10 minutes (401 fresh_sign_in_required); a local gateway answers 404 edge_mode_off.",
    answer: { status: 201, schema: PairingCodeAnswerSchema },
    refuses: ["edge_mode_off", "fresh_sign_in_required"],
    async handle(req) {
      const { env, now, audit } = req;
      edgeOrigin(env);
      // A code lets a machine link to this edge: only the owner, here and recently signed in, makes one.
      assertOwnerPresence(req);
      const code = freshPairingCode();
      const expiresAt = now + PAIRING_CODE_TTL_MS;
      await bridgeLinkPairing(env).addPairingCode(await sha256Hex(new TextEncoder().encode(code)), now, expiresAt);
      await audit({
        kind: "edge_pairing_code_created",
        outcome: "allowed",
        subject: "edge",
        detail: { expires_at: new Date(expiresAt).toISOString() },
      });
      return noStoreJson({ code, expires_at: new Date(expiresAt).toISOString() }, 201);
    },
  }),
  route({
    method: "GET",
    path: MACHINES_PATH,
    family: "edge",
    authz: { kind: "owner" },
    internal: false,
    contract:
      "The machines paired with this edge, in pairing order: which one runs the edge's apps (the first paired of those not forgotten), which are linked now, and which the owner forgot. A local gateway answers 404 edge_mode_off.",
    answer: { status: 200, schema: MachinesAnswerSchema },
    refuses: ["edge_mode_off"],
    async handle({ env }) {
      edgeOrigin(env);
      return machinesAnswer(env);
    },
  }),
  route({
    method: "POST",
    path: `${MACHINES_PATH}/:machine/forget`,
    family: "edge",
    authz: { kind: "owner" },
    internal: false,
    body: z.strictObject({}),
    contract:
      "The owner forgets a paired machine (a lost or stolen one): its key links no more (its open links close at once, 1008, and their calls fail) and never pairs again; the pairing secret stays spent. If it ran the edge's apps, the next machine paired that is not forgotten does from now on (the apps' files are on the forgotten one: they answer 503 until installed again). A machine never paired, or forgotten already, is 403 edge_machine_unknown; a local gateway answers 404 edge_mode_off.",
    answer: { status: 200, schema: MachinesAnswerSchema },
    refuses: ["edge_mode_off", "edge_machine_unknown"],
    async handle({ env, params, now, audit }) {
      edgeOrigin(env);
      const id = MachineIdSchema.safeParse(params.machine);
      if (!id.success) throw new GatewayError("edge_machine_unknown");
      const machine = id.data;
      const pairing = bridgeLinkPairing(env);
      const wasFirst = (await pairing.firstMachine()) === machine;
      if (!(await pairing.forget(machine, now))) throw new GatewayError("edge_machine_unknown");
      await bridgeLinkOf(env, machine).disconnect();
      await audit({
        kind: "edge_machine_forgotten",
        outcome: "allowed",
        subject: machine,
        detail: { ran_apps: wasFirst },
      });
      return machinesAnswer(env);
    },
  }),
  route({
    method: "GET",
    path: LINK_PATH,
    family: "edge",
    authz: {
      kind: "bootstrap",
      why: "the machine proves its paired key inside the socket, over a fresh challenge, before any call crosses it",
    },
    internal: false,
    query: z.strictObject({ machine: MachineIdSchema }),
    contract:
      "The WebSocket a paired machine's bridge dials (subprotocol personalclaw.link.v1). The edge sends a fresh challenge; the bridge's first frame must be its Ed25519 signature over it, or the socket closes 1008; then the edge's calls of the bridge contract cross it. An unpaired machine is 403 edge_machine_unknown before any upgrade.",
    answer: { streamed: "101 Switching Protocols: the machine's link" },
    refuses: ["edge_mode_off", "edge_link_upgrade_required", "edge_machine_unknown"],
    async handle({ c, env, query, audit }) {
      const origin = edgeOrigin(env);
      const protocols = c.req.header("sec-websocket-protocol") ?? "";
      if (
        c.req.header("upgrade")?.toLowerCase() !== "websocket" ||
        !protocols.split(",").some((part) => part.trim() === LINK_SUBPROTOCOL)
      )
        throw new GatewayError("edge_link_upgrade_required");
      if ((await bridgeLinkPairing(env).keyOf(query.machine)) === null) {
        await audit({
          kind: "edge_link_refused",
          outcome: "refused",
          subject: query.machine,
          group: "edge_link_unknown",
        });
        throw new GatewayError("edge_machine_unknown");
      }
      return bridgeLinkOf(env, query.machine).fetch(
        new Request("http://bridge-link/connect", {
          headers: { upgrade: "websocket", [LINK_MACHINE_HEADER]: query.machine, [LINK_ORIGIN_HEADER]: origin.origin },
        }),
      );
    },
  }),
];
