// `personalclaw token --edge` (and `security verify --edge`): a sign-in link for the paired edge,
// minted over a short link of this machine's own (it proves the machine's key like the bridge's link, but carries no call of the
// edge, so it never displaces the running bridge's link). The link carries the edge's public URL
// and, like every sign-in link, binds to the first address that opens it.
import { ErrorEnvelopeSchema } from "../../kernel/contracts/errors";
import { MintedTokenAnswerSchema } from "../../kernel/contracts/session";
import { parseStrictJson } from "../../kernel/text/strict-json";
import { printError } from "../cli/print";
import { homePaths } from "../home";
import type { Settings } from "../settings";
import { edgeDispatcher } from "./edge-dispatcher";
import { startEdgeLink } from "./edge-link";
import { readEdgeRecord } from "./edge-record";

const LINK_WAIT_MS = 30_000;

const fail = (json: boolean, code: string, message: string): number => printError({ code, message }, json);

/**
 * Calls one internal route of the paired edge's gateway as the command `work`, over a short link
 * of this machine's own: the answer, or the failure already said (the exit status to return).
 */
export async function callEdgeOnce(
  home: string,
  settings: Settings,
  json: boolean,
  call: { work: string; method: "GET" | "POST"; path: string; body?: unknown },
): Promise<{ status: number; body: string } | { failed: number }> {
  const record = readEdgeRecord(homePaths(home).edge);
  if (record.found !== "record")
    return {
      failed: fail(
        json,
        "edge_not_paired",
        record.found === "none" ? "This home is paired with no edge." : `edge.json is unreadable (${record.reason}).`,
      ),
    };
  const lines: string[] = [];
  const link = startEdgeLink({
    record: record.value,
    bridgeUrl: "",
    secret: "",
    dispatcher: edgeDispatcher(settings.edgeConnectTo),
    log: (line) => lines.push(line),
    serves: false,
  });
  try {
    let timer: NodeJS.Timeout | undefined;
    const up = await Promise.race([
      link.linked().then(() => true),
      new Promise<false>((resolvePromise) => (timer = setTimeout(() => resolvePromise(false), LINK_WAIT_MS))),
    ]);
    clearTimeout(timer);
    if (!up)
      return {
        failed: fail(
          json,
          "edge_unreachable",
          `No link to ${record.value.origin} within 30 s: ${lines.at(-1) ?? "no answer"}.`,
        ),
      };
    const answer = await link.callGateway(call.method, call.path, call.work, call.body);
    if (answer === null) return { failed: fail(json, "edge_unreachable", "The link closed before the edge answered.") };
    return answer;
  } finally {
    link.stop();
  }
}

export async function runEdgeToken(home: string, settings: Settings, options: { json?: boolean }): Promise<number> {
  const json = Boolean(options.json);
  const answer = await callEdgeOnce(home, settings, json, {
    work: "cli:token",
    method: "POST",
    path: "/api/auth/startup-link",
    body: {},
  });
  if ("failed" in answer) return answer.failed;
  const body = parseStrictJson(answer.body);
  const minted = MintedTokenAnswerSchema.safeParse(body.ok ? body.value : null);
  if (!minted.success) {
    const envelope = ErrorEnvelopeSchema.safeParse(body.ok ? body.value : null);
    return envelope.success
      ? fail(json, envelope.data.error.code, envelope.data.error.message)
      : fail(json, "unexpected_answer", `The edge answered ${answer.status}.`);
  }
  const { url, lasts, expires_at, explains } = minted.data;
  if (json) process.stdout.write(`${JSON.stringify({ url, lasts, expires_at, explains })}\n`);
  else process.stdout.write(`${url}\n`);
  return 0;
}
