// Status of this gateway. Never implicit for an app (PERM-20): an app reaches it only when
// its manifest declares /api/status.
import { authModeInForce } from "../../kernel/contracts/auth-mode";
import { z } from "zod";
import { appCounts } from "../app-registry";
import { route } from "../route-row";

const StatusAnswer = z.strictObject({
  version: z.string(),
  uptime_s: z.number().int().min(0),
  auth_mode: z.enum(["local_token", "none"]),
  apps: z.strictObject({ installed: z.number().int(), running: z.number().int().nullable() }),
});

export const statusRoutes = [
  route({
    method: "GET",
    path: "/api/status",
    family: "status",
    authz: { kind: "app-may", why: "an app that declared /api/status reads the version and counts" },
    internal: true,
    contract: "Version, uptime, the auth mode in force and app counts (null while a count is not known).",
    answer: { schema: StatusAnswer },
    refuses: [],
    async handle({ env, now }) {
      const counts = await appCounts(env);
      return {
        version: env.VERSION,
        uptime_s: Math.max(0, Math.floor((now - Date.parse(env.STARTED_AT)) / 1000)),
        auth_mode: authModeInForce(env).mode,
        apps: { installed: counts.installed, running: counts.running },
      };
    },
  }),
];
