// The gateway's answer about a transition the bridge found half done (at start, after workerd
// restarted, or when the request that asked for it went away; the bridge's side is
// host-bridge/install/transition-settlement.ts): the record decides. An install stands when
// the record holds its digest, else it is undone. A ready update is finished forward: recorded
// here when the record still names the version it replaced, its commit steps completed either
// way (update-commit.ts); one not ready stands only if it was recorded. An uninstall whose
// folder left is finished, its record removed here. Every answer is one security-log row.
import type { z } from "zod";
import type { AppRecord } from "../../kernel/contracts/app-record";
import type { JournalQuestionSchema, ReadyUpdate } from "../../kernel/contracts/bridge-operations";
import { AppManifestSchema } from "../../kernel/contracts/manifest";
import { AppNameSchema } from "../../kernel/rules/app-name";
import { appNotFound, readRecord } from "../app-registry";
import { deregisterMcpServers } from "../mcp-registration";
import type { RouteRequest } from "../route-row";
import { forgetRemovedApp } from "./uninstall";
import { completeUpdate, recordUpdate } from "./update-commit";

type JournalQuestion = z.output<typeof JournalQuestionSchema>;
type Outcome = "finish" | "undo";

/** Settles one app's journal: `finish` keeps the transition's result, `undo` has the bridge take it back. */
export async function settleTransition(
  req: RouteRequest<unknown, unknown>,
  rawName: string,
  question: JournalQuestion,
): Promise<{ outcome: Outcome }> {
  const name = AppNameSchema.safeParse(rawName);
  if (!name.success) throw appNotFound(rawName);
  const record = await readRecord(req.env, name.data);
  let outcome: Outcome;
  if (question.op === "install") outcome = record?.consentDigest === question.digest ? "finish" : "undo";
  else if (question.op === "update") outcome = await settleUpdate(req, name.data, record, question);
  else outcome = await settleUninstall(req, name.data, record, question.consentDigest);
  await req.audit({
    kind: "app_transition_recovered",
    outcome: "info",
    subject: name.data,
    detail: { op: question.op, outcome },
  });
  return { outcome };
}

/**
 * An update whose request went away: a ready one is recorded forward when the record still
 * names the version it replaced, and its commit steps are completed either way (each safe to
 * repeat); one not ready stands only if it was recorded.
 */
async function settleUpdate(
  req: RouteRequest<unknown, unknown>,
  name: string,
  record: AppRecord | null,
  question: { fromDigest: string; toDigest: string; ready?: ReadyUpdate },
): Promise<Outcome> {
  const { ready } = question;
  if (!record || !ready || ready.digest !== question.toDigest)
    return record?.consentDigest === question.toDigest ? "finish" : "undo";
  if (record.consentDigest !== question.fromDigest && record.consentDigest !== question.toDigest) return "undo";
  const previous = AppManifestSchema.parse(ready.previousManifest);
  const manifest =
    record.consentDigest === question.fromDigest
      ? await recordUpdate(req, record, ready)
      : AppManifestSchema.parse(record.manifest);
  await completeUpdate(req, {
    name,
    enabled: record.enabled,
    fromDigest: question.fromDigest,
    fromVersion: previous.version,
    previous,
    manifest,
    ready,
    settled: true,
  });
  return "finish";
}

/** An uninstall whose folder left is finished: the record of that install, if still there, goes. */
async function settleUninstall(
  req: RouteRequest<unknown, unknown>,
  name: string,
  record: AppRecord | null,
  consentDigest: string,
): Promise<Outcome> {
  if (record && record.lifecycle !== "locked" && record.consentDigest === consentDigest) {
    // Its servers leave mcp.json here too (safe to repeat): a refused uninstall puts them
    // back, and a request that died after the folder left answers like a refusal. An
    // unreadable mcp.json must not hold the removal (or a start) back: it is a line.
    await deregisterMcpServers(req.env, name, record.manifest).catch((error: unknown) =>
      console.error("uninstall_settle_mcp_failed", name, String(error)),
    );
    await forgetRemovedApp(req.env, name, req.now);
  }
  return "finish";
}
