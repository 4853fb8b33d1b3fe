// The install review: what installing an app grants and runs, in the order the consent dialog
// shows it (INST-12, MAN-07..09). The bridge builds it (host-bridge/install/review.ts), the
// consent digest covers it, and the CLI and the dashboard render it: one schema for all three,
// so the owner's yes is to exactly these fields. Imports nothing but zod.
import { z } from "zod";
import { NpmClosureReviewSchema } from "./npm-closure";
import { McpbBundleRecordSchema } from "./mcpb-bundle";

export const ReviewVerdictSchema = z.enum(["clean", "warning", "dangerous"]);
export type ReviewVerdict = z.infer<typeof ReviewVerdictSchema>;

export const ReviewFindingSchema = z.object({
  rule: z.string(),
  severity: z.enum(["dangerous", "warning"]),
  /** Relative to the bundle root; "app.json" for manifest findings. */
  path: z.string(),
  /** 1-based; 0 when the finding is about the file or folder as a whole. */
  line: z.number().int(),
  /** Whether the app (or the platform for it) runs or loads this file. */
  runs: z.boolean(),
  message: z.string(),
});
export type ReviewFinding = z.infer<typeof ReviewFindingSchema>;

const ReviewCommandSchema = z.object({ command: z.string(), args: z.array(z.string()) });
const HookSchema = ReviewCommandSchema.extend({ timeoutSeconds: z.number() }).nullable();

export const InstallReviewSchema = z.object({
  app: z.object({
    name: z.string(),
    version: z.string(),
    displayName: z.string().nullable(),
    description: z.string().nullable(),
  }),
  /** What it needs that PersonalClaw does not install — shown first. */
  prerequisites: z.array(z.object({ name: z.string(), why: z.string(), how: z.string() })),
  permissions: z.object({
    api: z.array(z.string()),
    /** Owner settings it may read (GRANT-01); security settings can never be here. */
    config: z.array(z.string()),
    /** Owner settings it may also write. */
    configWrite: z.array(z.string()),
    events: z.array(z.string()),
    eventSubscriptions: z.array(z.string()),
    mcpTools: z.array(z.string()),
    appMessaging: z.array(z.string()),
    memory: z.boolean(),
    cron: z.boolean(),
    storage: z.boolean(),
    /** It may put questions in the owner's Inbox (permissions.approvals is exactly true). */
    approvals: z.boolean(),
    agent: z.enum(["text", "read", "tools"]).nullable(),
    network: z.object({ hosts: z.array(z.string()), enforced: z.literal(true), note: z.string() }),
    /**
     * The folders it asks for (permissions.folders), one "name (access): why" each; absent when it
     * asks for none, so the review and digest of an app without needs are what they were.
     */
    folders: z.array(z.string()).optional(),
  }),
  scheduledJobs: z.array(
    z.object({
      name: z.string(),
      schedule: z.string(),
      timezone: z.string(),
      route: z.string().nullable(),
      timeoutSeconds: z.number(),
      enabled: z.boolean(),
      registers: z.boolean(),
    }),
  ),
  pythonPackages: z.array(z.string()),
  npmPackages: z.object({ packages: z.array(z.string()), note: z.string().nullable() }),
  /** The pinned closure of an app generated from an npm package (npm-closure.json); null for any other app. */
  npmClosure: NpmClosureReviewSchema.nullable(),
  ui: z
    .object({
      entry: z.string().nullable(),
      pages: z.array(z.object({ entryPoint: z.string(), title: z.string().nullable() })),
    })
    .nullable(),
  backend: ReviewCommandSchema.extend({ entryPoint: z.string().nullable(), healthCheck: z.string() }).nullable(),
  installHook: HookSchema,
  uninstallHook: HookSchema,
  updateHook: z.object({ declared: z.boolean(), runs: z.literal(false) }),
  /** Each server's sealed definition (MCP-07): transport, command, args, env names, remote URL; the digest covers it. */
  mcpServers: z.array(
    z.object({
      name: z.string(),
      transport: z.enum(["stdio", "http"]),
      command: z.string().nullable(),
      args: z.array(z.string()),
      envNames: z.array(z.string()),
      /** The values the manifest sets (`${DATA}` stands for the app's data folder as the server sees it). */
      env: z.record(z.string(), z.string()),
      url: z.string().nullable(),
    }),
  ),
  launches: z.array(
    z.object({
      program: z.string(),
      why: z.string(),
      inherits: z.array(z.string()),
      inheritsWhile: z.object({ setting: z.string(), value: z.boolean() }).nullable(),
      hosts: z.array(z.string()),
      npmPackage: z.string().nullable(),
    }),
  ),
  writes: z.array(z.object({ path: z.string(), why: z.string() })),
  /**
   * Secrets it asks for; each reaches it only if the owner assigns one. `appHoldsValue` is true
   * when the app gets the value itself (delivery env), false when it gets a placeholder its
   * broker replaces; `sendsTo` lists the origins that receive it and where; `note` says both.
   * The three are absent from a review kept before secrets said where they go.
   */
  secrets: z.array(
    z.object({
      name: z.string(),
      why: z.string(),
      appHoldsValue: z.boolean().optional(),
      sendsTo: z.array(z.object({ origin: z.string(), place: z.string() })).optional(),
      note: z.string().optional(),
    }),
  ),
  findings: z.object({ runtime: z.array(ReviewFindingSchema), tests: z.array(ReviewFindingSchema) }),
  verdict: ReviewVerdictSchema,
  /**
   * Data an earlier install of this name left parked: whose it is, and that it is adopted only
   * with {"adopt_data": true}; otherwise this install starts with an empty data/.
   */
  keptData: z
    .object({
      version: z.string().nullable(),
      parkedAt: z.string().nullable(),
      consentDigest: z.string().nullable(),
      note: z.string(),
    })
    .nullable(),
  /** Top-level manifest keys this core does not read: kept, shown, never trusted. */
  unrecognisedManifestKeys: z.array(z.string()),
  /** The .mcpb bundle an app was generated from (mcpb-bundle.json); absent for any other app, whose digest stays as it was. */
  mcpbBundle: McpbBundleRecordSchema.optional(),
});
export type InstallReview = z.infer<typeof InstallReviewSchema>;

/** One disclosure field an update changes against the review the owner consented to. */
export const ReviewChangeSchema = z.object({
  /** The review field, e.g. `permissions.api` or `backend`. */
  field: z.string(),
  before: z.unknown(),
  after: z.unknown(),
});
export type ReviewChange = z.infer<typeof ReviewChangeSchema>;
