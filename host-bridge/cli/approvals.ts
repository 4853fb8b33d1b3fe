// `personalclaw approvals list|approve|deny|grants|revoke`: the owner's Inbox from the
// terminal. Every call is made as an owner session the CLI mints with the local secret
// (gateway-client.ts asOwnerSession), because the internal credential answers nothing.
import { z } from "zod";
import {
  ApprovalViewSchema,
  GrantViewSchema,
  type ApprovalView,
  type GrantView,
} from "../../kernel/contracts/approvals";
import { safeLine } from "../../kernel/text/text-safety";
import { asOwnerSession, parseAnswer, type GatewayAnswer } from "./gateway-client";
import { printRefusal } from "./print";

function isAnswer(value: unknown): value is GatewayAnswer {
  return typeof value === "object" && value !== null && "status" in value && "body" in value;
}

async function ownerCall(
  home: string,
  work: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<GatewayAnswer> {
  const answer = await asOwnerSession(home, work, (call) => call(method, path, body));
  return isAnswer(answer) ? answer : { status: 500, body: answer };
}

/** Prints a refusal, or the answer parsed with its route's schema: as JSON it came, or as text. */
function finish<T>(answer: GatewayAnswer, schema: z.ZodType<T>, json: boolean, text: (body: T) => string): number {
  const parsed = parseAnswer(answer, schema);
  if (!parsed.ok) return printRefusal(parsed.answer, json);
  process.stdout.write(json ? `${JSON.stringify(answer.body)}\n` : text(parsed.body));
  return 0;
}

// Every string an asker supplied is printed through safeLine: a CR or an escape in a title must not rewrite a line.
function approvalLine(a: ApprovalView): string {
  return [
    a.id,
    a.state,
    safeLine(a.asked_by),
    safeLine(a.kind),
    safeLine(a.title),
    safeLine(`${a.action?.route ?? ""} ${a.action?.target ?? ""}`.trim()),
    `scopes=${(a.scopes ?? []).join(",")}`,
  ].join("\t");
}

function grantLine(g: GrantView): string {
  return [g.id, safeLine(g.asked_by), safeLine(g.kind), g.scope, `until ${g.expires_at ?? "revoked"}`].join("\t");
}

export async function runApprovalsList(home: string, values: { all?: boolean; json?: boolean }): Promise<number> {
  const answer = await ownerCall(
    home,
    "approvals-list",
    "GET",
    values.all ? "/api/approvals" : "/api/approvals?state=pending",
  );
  return finish(answer, z.object({ approvals: z.array(ApprovalViewSchema) }), Boolean(values.json), (body) =>
    body.approvals.length === 0 ? "Nothing is waiting for you.\n" : `${body.approvals.map(approvalLine).join("\n")}\n`,
  );
}

export async function runApprovalsAnswer(
  decision: "approve" | "deny",
  home: string,
  id: string,
  values: { scope?: string; json?: boolean },
): Promise<number> {
  const json = Boolean(values.json);
  const body = decision === "approve" ? { scope: values.scope ?? "once" } : {};
  const answer = await ownerCall(
    home,
    `approvals-${decision}`,
    "POST",
    `/api/approvals/${encodeURIComponent(id)}/${decision}`,
    body,
  );
  return finish(
    answer,
    z.object({ approval: ApprovalViewSchema, grant: GrantViewSchema.nullable() }),
    json,
    (b) =>
      `${b.approval.state === "approved" ? "Approved" : "Denied"} ${b.approval.id}${b.grant ? `; grant ${b.grant.id} (${b.grant.scope}) until ${b.grant.expires_at ?? "revoked"}` : ""}.\n`,
  );
}

export async function runApprovalsGrants(home: string, values: { json?: boolean }): Promise<number> {
  const answer = await ownerCall(home, "approvals-grants", "GET", "/api/approvals/grants");
  return finish(answer, z.object({ grants: z.array(GrantViewSchema) }), Boolean(values.json), (body) =>
    body.grants.length === 0 ? "No live grants.\n" : `${body.grants.map(grantLine).join("\n")}\n`,
  );
}

export async function runApprovalsRevoke(home: string, grantId: string, values: { json?: boolean }): Promise<number> {
  const json = Boolean(values.json);
  const answer = await ownerCall(
    home,
    "approvals-revoke",
    "DELETE",
    `/api/approvals/grants/${encodeURIComponent(grantId)}`,
    {},
  );
  return finish(
    answer,
    z.object({ revoked: GrantViewSchema }),
    json,
    (b) => `Revoked ${b.revoked.id}; ${safeLine(b.revoked.asked_by)} asks again for ${safeLine(b.revoked.kind)}.\n`,
  );
}
