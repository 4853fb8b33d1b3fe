// The gateway's own processes (host bridge, CLI) call it with X-Internal-Secret. The
// credential opens only the routes whose row lists it, matched whole, and every call must
// name its work so the security log can say whose work it was (INT-03..06).
import { GatewayError } from "../../kernel/contracts/errors";
import type { Env } from "../../durable/env";
import type { RouteRow } from "../route-row";
import { audit } from "../../durable/security-log/audit";
import { equalsInConstantTime } from "./constant-time";
import type { Principal } from "./principal";
import { refusalGroup } from "../refusal-group";
import { namedWork } from "../../kernel/contracts/internal-work";
import { publicOriginOf } from "./public-origin";
import { isLinkDoorRequest } from "./link-door";

const WORK_NAME = /^[a-z][a-z0-9._:-]{0,63}$/i;

/** The internal principal of a request carrying X-Internal-Secret, or null when it carries none. */
export async function internalPrincipal(
  request: Request,
  row: Pick<RouteRow, "internal" | "method" | "path"> | null,
  env: Env,
  path: string,
): Promise<Principal | null> {
  const presented = request.headers.get("x-internal-secret");
  if (presented === null) return null;
  const subject = `${request.method} ${path}`;
  const refuse = async (
    code:
      | "internal_route_refused"
      | "internal_secret_invalid"
      | "internal_call_names_no_work"
      | "internal_credential_off_link",
  ) => {
    const group = refusalGroup(request.method, path, [], row);
    await audit(env, { kind: code, outcome: "refused", principal: "anonymous", subject, secrets: [presented], group });
    return new GatewayError(code, { vars: { method: request.method, path } });
  };
  // At the edge the worker's own processes are paired bridges, and they reach it only over their links.
  if (publicOriginOf(env).mode !== "local" && !isLinkDoorRequest(request))
    throw await refuse("internal_credential_off_link");
  if (!row?.internal) throw await refuse("internal_route_refused");
  if (!equalsInConstantTime(presented, env.INTERNAL_SECRET)) throw await refuse("internal_secret_invalid");
  const work = namedWork((name) => request.headers.get(name));
  if (!WORK_NAME.test(work)) throw await refuse("internal_call_names_no_work");
  return { kind: "internal", work };
}
