// Package sources for the dashboard, all owner-only: the Add page stages a spec (npm:, pypi:,
// registry:, an .mcpb URL or path) into the quarantine through the bridge, which resolves and
// generates it as `apps add` does, then answers the ordinary preview of that folder, whose review
// and digest the ordinary install (POST /api/apps) takes; the Store lists a configured MCP
// Registry's entries, marked where an installed app came from one; the update check re-resolves
// each installed app's source on demand and never installs anything.
import { z } from "zod";
import { appRegistry } from "../../durable/instances";
import type { Env } from "../../durable/env";
import type { ErrorCode } from "../../kernel/contracts/errors";
import { BRIDGE_OPERATIONS, type BridgeRequest } from "../../kernel/contracts/bridge-operations";
import {
  RegistryListingEntrySchema,
  RegistryListingRequestSchema,
  RegistryListingSchema,
  SourceChecksSchema,
  SourceStageRequestSchema,
} from "../../kernel/contracts/package-sources";
import { PACKAGE_SOURCE_ERROR_CODES } from "../../kernel/contracts/source-error-codes";
import { readRecord, requireRecord } from "../app-registry";
import { bridgeCall } from "../bridge-client";
import { auditedRefusal } from "../lifecycle/audited-refusal";
import { route } from "../route-row";

/** Resolving a closure fetches every tarball or wheel to pin it: minutes on a slow source. */
const STAGE_TIMEOUT_MS = 600_000;
const CHECK_TIMEOUT_MS = 120_000;

const PreviewAnswer = BRIDGE_OPERATIONS["POST /apps/preview"].answer;
const StagedAnswer = PreviewAnswer.extend({
  name: z.string(),
  /** The generated folder in the quarantine: what POST /api/apps (or /api/apps/:name/update) takes as `source`. */
  source: z.string(),
  /** An app of this name is installed: the review is previewed as its update. */
  installed: z.boolean(),
});
const Installed = z.object({ app: z.string(), version: z.string() }).nullable();
const ListingAnswer = RegistryListingSchema.extend({
  entries: z.array(RegistryListingEntrySchema.extend({ installed: Installed })),
});
const OutdatedQuery = z.object({ app: z.string().max(64).optional() }).strict();

const SOURCE_REFUSALS = Object.keys(PACKAGE_SOURCE_ERROR_CODES) as ErrorCode[];

/** Each installed app (or the one named) with its consented review; a record kept before reviews were has none to check. */
async function installedReviews(env: Env, only?: string) {
  const names = only === undefined ? await appRegistry(env).names() : [(await requireRecord(env, only)).name];
  const found = [];
  for (const name of names) {
    const review = (await readRecord(env, name))?.review;
    if (review) found.push({ name, review });
  }
  return found;
}

type Review = Awaited<ReturnType<typeof installedReviews>>[number]["review"];

/** The installed app an entry is, by its registry entry's name or by the npm package it lists. */
function installedAs(
  entry: z.infer<typeof RegistryListingEntrySchema>,
  installed: Array<{ name: string; review: Review }>,
): z.infer<typeof Installed> {
  const npm = new Set(entry.packages.filter((p) => p.registryType === "npm").map((p) => p.identifier));
  for (const { name, review } of installed) {
    const fromEntry = review.mcpRegistryEntry as { name?: unknown; version?: unknown } | undefined;
    if (fromEntry?.name === entry.name) return { app: name, version: String(fromEntry.version) };
    const root = (review.npmClosure as { root?: unknown } | null | undefined)?.root;
    if (typeof root === "string" && npm.has(root.slice(0, root.lastIndexOf("@"))))
      return { app: name, version: root.slice(root.lastIndexOf("@") + 1) };
  }
  return null;
}

export const sourceRoutes = [
  route({
    method: "POST",
    path: "/api/sources/stage",
    family: "apps",
    authz: { kind: "owner" },
    internal: false,
    body: SourceStageRequestSchema,
    contract:
      "Resolves a package source (npm:<name>@<version>, pypi:<name>==<version>, registry:<server name>[@<version>], an https:// URL or absolute path of an .mcpb bundle) with the owner's env, folder needs and arguments written as `apps add` takes them, and generates the app into the quarantine exactly as `apps add` does; answers its name, the generated folder (`source`) and that folder's review and consent digest, previewed as an update when an app of the name is installed. Installs nothing: POST /api/apps with `source` and `consent` does.",
    answer: { schema: StagedAnswer },
    refuses: [...SOURCE_REFUSALS, "config_file_invalid", "app_source_invalid", "bridge_unavailable"],
    async handle(req) {
      // The spec goes into the security log, which masks a URL's login in it as in every row.
      return auditedRefusal(req, "app_preview_refused", req.body.spec.slice(0, 300), async () => {
        const staged = await bridgeCall(req.env, "POST /sources/stage", req.body, STAGE_TIMEOUT_MS);
        const record = await readRecord(req.env, staged.name);
        const preview = await bridgeCall(
          req.env,
          "POST /apps/preview",
          record
            ? { source: staged.source, installedReview: record.review ?? null, installedName: record.name }
            : { source: staged.source },
          300_000,
        );
        return { ...preview, name: staged.name, source: staged.source, installed: record !== null };
      });
    },
  }),
  route({
    method: "GET",
    path: "/api/sources/registry",
    family: "apps",
    authz: { kind: "owner" },
    internal: false,
    query: RegistryListingRequestSchema,
    contract:
      "A page of the latest entries of one MCP Registry of install.mcp_registries (the first unless `registry` names another), with the registry's own `search` and `cursor`; each entry with the registry it came from, `official` only when that is the official registry's URL, the spec that adds it, and the installed app it is, if any. Every configured registry is listed with its provenance.",
    answer: { schema: ListingAnswer },
    refuses: ["mcp_registry_not_configured", "source_unreachable", "source_address_refused", "bridge_unavailable"],
    async handle({ env, query }) {
      const listing = await bridgeCall(env, "POST /sources/registry", query, 60_000);
      const installed = await installedReviews(env);
      return {
        ...listing,
        entries: listing.entries.map((entry) => ({ ...entry, installed: installedAs(entry, installed) })),
      };
    },
  }),
  route({
    method: "GET",
    path: "/api/sources/outdated",
    family: "apps",
    authz: { kind: "owner" },
    internal: true,
    query: OutdatedQuery,
    contract:
      "For each installed app generated from a package source (or only `app`), asks its source now: the installed version, the newest the owner's configured source offers, whether it is newer, and the spec `apps update <app> <spec>` takes; a source that cannot be asked answers its error code in place. Installs nothing.",
    answer: { schema: SourceChecksSchema },
    refuses: ["app_not_found", "config_file_invalid", "bridge_unavailable"],
    async handle({ env, query }) {
      const apps = await installedReviews(env, query.app);
      // A record's review is untyped here; the bridge parses the fields it reads with its row.
      const request = { apps } as BridgeRequest<"POST /sources/check">;
      return bridgeCall(env, "POST /sources/check", request, CHECK_TIMEOUT_MS);
    },
  }),
];
