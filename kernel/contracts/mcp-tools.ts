// The tools an app's MCP server offers the agent, as the owner consented to them (issue 39):
// each tool's definition pinned per install (app, server, consent digest), its allow / ask /
// deny policy, the state the agent sees it in, and the messages `mcp run` and the gateway
// exchange per listing and per call. Shared by workers/, durable/ and host-bridge/; zod only.
import { z } from "zod";
import { canonicalJson } from "../crypto/canonical-json";
import { sha256Hex } from "../crypto/hex";

export const TOOL_POLICIES = ["allow", "ask", "deny"] as const;
export const ToolPolicySchema = z.enum(TOOL_POLICIES);
export type ToolPolicy = z.infer<typeof ToolPolicySchema>;

/** How permissive a policy is: a change to a higher rank loosens, and needs owner presence. */
export const POLICY_RANK: Record<ToolPolicy, number> = { deny: 0, ask: 1, allow: 2 };

/** At most this many tools per server are pinned; a listing beyond it is refused whole. */
export const MAX_TOOLS_PER_SERVER = 256;
/** A tool's description, and each of its schemas in canonical JSON, at most this many characters. */
export const MAX_TOOL_TEXT = 16_384;
/** How much of a call's arguments an approval shows (after the text-safety module). */
export const ARGUMENTS_SHOWN_CHARS = 600;
/**
 * The tool stamp (docs/design/tool-policy.md, "What it costs"): a file the AppRegistry rewrites
 * with a fresh random value, before it answers, after every change a call's verdict reads (an
 * app installed, updated, switched or removed; a listing reported; a change approved; a policy
 * or logging switch set). `mcp run` keeps an `allow` while the file still holds the value it
 * read before asking, and at most TOOL_VERDICT_KEPT_MS.
 */
export const TOOL_STAMP_FILE = "stamp";
export const TOOL_VERDICT_KEPT_MS = 2000;

/** How many recent calls the gateway keeps per app for the owner's view. */
export const RECENT_CALLS_KEPT = 100;

/**
 * Tool names no app may take (TOOL-07): the platform keeps every name that starts with
 * `personalclaw` (any case, any separator after it) for tools of its own.
 */
export function isReservedToolName(name: string): boolean {
  return /^personalclaw/i.test(name);
}

const jsonObject = z.record(z.string(), z.unknown());

/** The MCP tool annotations (spec 2025-11-25, `ToolAnnotations`); hints only, never trusted for more than a default. */
export const ToolAnnotationsSchema = z
  .object({
    title: z.string().max(500).optional(),
    readOnlyHint: z.boolean().optional(),
    destructiveHint: z.boolean().optional(),
    idempotentHint: z.boolean().optional(),
    openWorldHint: z.boolean().optional(),
  })
  .strip();

/**
 * A tool's name as a pin takes it: printable ASCII without spaces, 1-128 characters. The MCP
 * specification (revision 2025-11-25) asks for letters, digits, `_`, `-` and `.`; names it only
 * advises against (a `/` or `:` some servers publish) are taken, but not a name the model could
 * read as another's: a letter of another script, an invisible or bidirectional character, a
 * space. So no app shadows another's `read_file` with `read_fіle` (a Cyrillic і): such a tool is
 * withheld. Names compare case-insensitively for conflicts (tool-pins.ts).
 */
const TOOL_NAME = /^[\x21-\x7E]{1,128}$/;

/** One tool's definition as pinned: what the model reads (name, title, description) and what it may send (schemas). */
export const ToolDefinitionSchema = z
  .object({
    name: z.string().regex(TOOL_NAME),
    title: z.string().max(500).optional(),
    description: z.string().max(MAX_TOOL_TEXT).optional(),
    inputSchema: jsonObject,
    outputSchema: jsonObject.optional(),
    annotations: ToolAnnotationsSchema.optional(),
  })
  .strict()
  .refine(
    (tool) =>
      canonicalJson(tool.inputSchema).length <= MAX_TOOL_TEXT &&
      (tool.outputSchema === undefined || canonicalJson(tool.outputSchema).length <= MAX_TOOL_TEXT),
    `a tool's schemas are at most ${MAX_TOOL_TEXT} characters each`,
  );
export type ToolDefinition = z.infer<typeof ToolDefinitionSchema>;

/**
 * The default policy from the annotations, read with the specification's defaults
 * (readOnlyHint false, openWorldHint true): only a tool that says it is read-only and says it
 * does not reach an open world is allowed; everything else (no annotations, destructive,
 * open-world, or silent about the world) asks.
 */
export function defaultToolPolicy(annotations: ToolDefinition["annotations"]): ToolPolicy {
  return annotations?.readOnlyHint === true && annotations.openWorldHint === false ? "allow" : "ask";
}

/** sha256 over the canonical JSON of a definition: what a pin compares. */
export async function toolDefinitionDigest(tool: ToolDefinition): Promise<string> {
  return `sha256:${await sha256Hex(new TextEncoder().encode(canonicalJson(tool)))}`;
}

/** sha256 over the canonical JSON of a call's arguments: what the log keeps instead of the values. */
export async function argumentsDigest(args: unknown): Promise<string> {
  return `sha256:${await sha256Hex(new TextEncoder().encode(canonicalJson(args ?? {})))}`;
}

/**
 * How the agent sees a tool: `pinned` (listed, callable under its policy); withheld until the
 * owner approves: `new`, `changed`, `removed`; withheld for good: `conflict` (another app
 * installed earlier has the name, or the platform keeps it).
 */
export const TOOL_STATES = ["pinned", "new", "changed", "removed", "conflict"] as const;
export const ToolStateSchema = z.enum(TOOL_STATES);
export type ToolState = z.infer<typeof ToolStateSchema>;

/** One tool as the owner's view and `mcp run` read it. */
export const ToolViewSchema = z.strictObject({
  name: z.string(),
  state: ToolStateSchema,
  policy: ToolPolicySchema,
  /** Who chose the policy: the annotations' default, or the owner. */
  policySetBy: z.enum(["default", "owner"]),
  /** The pinned definition (null for a tool offered but never pinned). */
  pinned: ToolDefinitionSchema.nullable(),
  /** What the server offers now when it differs from the pin (null when removed or the same). */
  offered: ToolDefinitionSchema.nullable(),
  /** The approval that asks the owner about the change, while one is pending or was denied. */
  approvalId: z.string().nullable(),
  /** For a conflict: the app whose tool has the name, or "platform". */
  conflictWith: z.string().nullable(),
  /** The owner's switch: each call's row keeps the arguments as the approval shows them (off: their digest only). */
  logArguments: z.boolean(),
});
export type ToolView = z.infer<typeof ToolViewSchema>;

export const ServerToolsViewSchema = z.strictObject({
  server: z.string(),
  /** The install the pins belong to; null before the server's first run of this install. */
  consentDigest: z.string().nullable(),
  pinnedAt: z.string().nullable(),
  tools: z.array(ToolViewSchema),
});
export type ServerToolsView = z.infer<typeof ServerToolsViewSchema>;

/** `mcp run` reports what its server offers (POST /api/internal/mcp/:app/:server/tools). */
export const ToolsReportSchema = z.strictObject({
  consentDigest: z.string().max(200),
  tools: z.array(ToolDefinitionSchema).max(MAX_TOOLS_PER_SERVER),
});

/** `mcp run` asks before each call (POST /api/internal/mcp/:app/:server/calls). */
export const ToolCallRequestSchema = z.strictObject({
  consentDigest: z.string().max(200),
  tool: z.string().min(1).max(128),
  /** The digest of the definition the server offers now. */
  definitionDigest: z.string().max(100),
  argumentsDigest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  /** The arguments as the approval shows them: already through the text-safety module and cut. */
  argumentsShown: z.string().max(ARGUMENTS_SHOWN_CHARS + 20),
  /** How long the run waits for the owner (mcp.ask_timeout_s): the approval expires with it. */
  askTimeoutSeconds: z.number().int().min(1).max(86_400),
});

/** What the gateway decides about one call: go on, refuse with an outcome, or wait for the approval. */
export const ToolCallVerdictSchema = z.discriminatedUnion("decision", [
  z.strictObject({ decision: z.literal("allow"), outcome: z.enum(["allowed", "approved"]) }),
  z.strictObject({
    decision: z.literal("refuse"),
    outcome: z.enum(["withheld", "denied_by_policy"]),
    reason: z.string(),
  }),
  z.strictObject({ decision: z.literal("ask"), approvalId: z.string() }),
]);
export type ToolCallVerdict = z.infer<typeof ToolCallVerdictSchema>;

/** How a call ended; every one is a security-log row. */
export const CALL_OUTCOMES = [
  "allowed",
  "approved",
  "denied",
  "expired",
  "denied_by_policy",
  "withheld",
  "server_error",
  "timed_out",
  "answer_too_large",
] as const;
export const CallOutcomeSchema = z.enum(CALL_OUTCOMES);
export type CallOutcome = z.infer<typeof CallOutcomeSchema>;

/** Outcomes where the server was never reached, or its answer never reached the agent: refusals in the log. */
export const REFUSED_OUTCOMES: ReadonlySet<CallOutcome> = new Set([
  "denied",
  "expired",
  "denied_by_policy",
  "withheld",
  "timed_out",
  "answer_too_large",
]);

/** `mcp run` reports each call's end (POST /api/internal/mcp/:app/:server/calls/record). */
export const ToolCallRecordSchema = z.strictObject({
  tool: z.string().min(1).max(128),
  argumentsDigest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  outcome: CallOutcomeSchema,
  durationMs: z.number().int().min(0).max(86_400_000),
  approvalId: z.string().max(80).nullable(),
  /** The arguments as an approval shows them; kept only for a tool whose values the owner logs. */
  argumentsShown: z.string().max(ARGUMENTS_SHOWN_CHARS + 20),
});
export type ToolCallRecord = z.infer<typeof ToolCallRecordSchema>;

/** At most this many calls' ends travel in one report: `mcp run` sends what ended while its last report was on its way. */
export const MAX_CALLS_PER_REPORT = 256;

/** `mcp run` reports the ends of one or more calls, in the order they ended. */
export const ToolCallReportSchema = z.strictObject({
  calls: z.array(ToolCallRecordSchema).min(1).max(MAX_CALLS_PER_REPORT),
});

/** One recent call as the owner's view shows it: never the arguments, only their digest. */
export const RecentCallSchema = z.strictObject({
  at: z.string(),
  server: z.string(),
  tool: z.string(),
  outcome: CallOutcomeSchema,
  argumentsDigest: z.string(),
  /** The arguments as shown, for a tool whose values the owner logs; null otherwise. */
  arguments: z.string().nullable(),
  durationMs: z.number().int(),
});
export type RecentCall = z.infer<typeof RecentCallSchema>;

/** The owner sets one tool's policy (POST /api/mcp/:app/:server/tools/:tool/policy). */
export const SetToolPolicySchema = z.strictObject({ policy: ToolPolicySchema });

/** The owner turns the logging of one tool's argument values on or off (POST /api/mcp/:app/:server/tools/:tool/arguments-log). */
export const SetArgumentsLogSchema = z.strictObject({ log: z.boolean() });

/** The approval kind of a call to one tool: grants match on it, so it names the tool (any name, made a kind). */
export async function toolCallKind(tool: string): Promise<string> {
  const words = tool
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 40);
  const digest = (await sha256Hex(new TextEncoder().encode(tool))).slice(0, 8);
  return `mcp.tool_call.t_${words ? `${words}_` : ""}${digest}`;
}

/** The approval kind of a changed definition (never granted beyond once). */
export const TOOL_DEFINITION_KIND = "mcp.tool_definition";

/** Who asks the owner about a server's tools: the run's own internal label, which no app can take. */
export function toolAsker(app: string, server: string): string {
  return `internal:mcp:${app}:${server}`;
}
