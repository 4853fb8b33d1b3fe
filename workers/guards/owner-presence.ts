// Owner presence (AUTH-26): a sign-in from the last 10 minutes, or the machine's local
// secret presented from a loopback address. Minting a lasting credential needs one, and so
// does a yes that widens an app's reach or leaves a lasting grant behind.
import { GatewayError } from "../../kernel/contracts/errors";
import { PRESENCE_WINDOW_MS } from "../../kernel/contracts/session";
import { equalsInConstantTime } from "./constant-time";
import type { RouteRequest } from "../route-row";
import { clientAddress } from "./client-address";
import { publicOriginOf } from "./public-origin";

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

/** Throws 401 `fresh_sign_in_required` unless the request proves the owner is present. */
export function assertOwnerPresence(req: RouteRequest<unknown, unknown>): void {
  const local = req.c.req.header("x-local-secret");
  if (
    local !== undefined &&
    // At the edge no request comes from this machine's loopback: only a fresh sign-in proves presence.
    publicOriginOf(req.env).mode === "local" &&
    LOOPBACK.test(clientAddress(req.c.req.raw, req.env)) &&
    equalsInConstantTime(local, req.env.INTERNAL_SECRET)
  )
    return;
  const p = req.principal;
  if (p.kind === "owner" && p.via !== "auth-off" && req.now - p.signedInAt <= PRESENCE_WINDOW_MS) return;
  throw new GatewayError("fresh_sign_in_required");
}
