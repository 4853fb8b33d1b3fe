// The security-log rows the CLI writes about the gateway's own life (started, stopped, workerd
// restarted, lost state accepted, anchor lost), appended through the running gateway so they
// join the chain like every other row.
import { callGateway } from "./gateway-client";

/** Appends a security-log row as the CLI; throws with the log's own reason when it refuses the row. */
export async function appendSecurityRow(
  home: string,
  kind: string,
  detail: Record<string, unknown>,
  outcome: "info" | "error" = "info",
): Promise<void> {
  const answer = await callGateway(home, "lifecycle", "POST", "/api/internal/sel/append", {
    kind,
    principal: "cli",
    outcome,
    subject: "",
    detail,
  });
  if (answer.status !== 200)
    throw new Error(
      `the security log refused the ${kind} row: ${answer.body?.error?.message ?? `status ${answer.status}`}`,
    );
}
