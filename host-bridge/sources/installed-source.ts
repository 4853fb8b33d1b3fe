// Whether an installed app's source has a newer version (UPD-07/09): read where the app came from
// out of its consented review (the MCP Registry entry, the npm closure's root, the .mcpb bundle)
// or, for a PyPI project, its installed pypi-closure.json when that names the project and version
// the review shows, then ask the owner's configured source now, under the egress address rules.
// It only reads: nothing is fetched beyond the metadata, nothing is installed; the answer names
// the spec `apps update <name> <spec>` takes, which goes through the review and consent again.
import { join } from "node:path";
import semver from "semver";
import { z } from "zod";
import { GatewayError } from "../../kernel/contracts/errors";
import type { SourceCheck, SourceCheckRequest } from "../../kernel/contracts/package-sources";
import type { OwnerConfig } from "../owner-config";
import { readPrivateRecord } from "../private-record";
import { resolveRegistryEntry } from "./mcp-registry-resolve";
import { latestNpmVersion } from "./npm-resolve";
import { PYPI_CLOSURE_FILE } from "./pypi-app";
import { latestPypiRelease } from "./pypi-resolve";
import { compareReleases, releaseOf } from "./python-versions";
import type { VettedFetchOptions } from "./vetted-fetch";

type CheckedApp = SourceCheckRequest["apps"][number];

export interface SourceCheckContext {
  appsDir: string;
  install: OwnerConfig["install"];
  resolve?: VettedFetchOptions["resolve"];
}

/** Where an installed app came from, before its source is asked. */
type Origin = Pick<SourceCheck, "app" | "kind" | "from" | "package" | "installed">;

const PypiClosureRecordSchema = z.object({ source: z.string().max(600), index: z.string().max(2048) });

function originOf(app: CheckedApp, appsDir: string): Origin | null {
  const { review } = app;
  if (review.mcpRegistryEntry) {
    const entry = review.mcpRegistryEntry;
    return { app: app.name, kind: "registry", from: entry.registry, package: entry.name, installed: entry.version };
  }
  if (review.mcpbBundle)
    return {
      app: app.name,
      kind: "mcpb",
      from: review.mcpbBundle.source,
      package: review.mcpbBundle.source,
      installed: review.mcpbBundle.version,
    };
  if (review.npmClosure) {
    const at = review.npmClosure.root.lastIndexOf("@");
    if (at <= 0) return null;
    const [name, installed] = [review.npmClosure.root.slice(0, at), review.npmClosure.root.slice(at + 1)];
    return { app: app.name, kind: "npm", from: review.npmClosure.registry, package: name, installed };
  }
  // A PyPI project's record counts only when it names what the consented review shows.
  const pypi = readPrivateRecord(join(appsDir, app.name, PYPI_CLOSURE_FILE), PypiClosureRecordSchema);
  const { displayName, version } = review.app;
  if (pypi === null || displayName === null || pypi.source !== `pypi:${displayName}==${version}`) return null;
  return { app: app.name, kind: "pypi", from: pypi.index, package: displayName, installed: version };
}

function isNewer(kind: Origin["kind"], latest: string, installed: string): boolean {
  if (kind === "pypi") {
    const [a, b] = [releaseOf(latest), releaseOf(installed)];
    return a !== null && b !== null && compareReleases(a, b) > 0;
  }
  if (semver.valid(latest) && semver.valid(installed)) return semver.gt(latest, installed);
  // A registry version that is not semver: any other version it calls latest is news.
  return kind === "registry" && latest !== installed;
}

/** The newest version the owner's source offers for `origin` now (never a bundle's: it names none). */
async function latestOf(origin: Origin, ctx: SourceCheckContext): Promise<string | null> {
  const resolve = ctx.resolve;
  switch (origin.kind) {
    case "registry": {
      const found = await resolveRegistryEntry({
        registries: ctx.install.mcp_registries,
        name: origin.package,
        version: null,
        ...(resolve ? { resolve } : {}),
      });
      return found.server.version;
    }
    case "npm":
      return latestNpmVersion(ctx.install.npm_registry, origin.package, resolve);
    case "pypi":
      return latestPypiRelease(ctx.install.pypi_index, origin.package, resolve);
    case "mcpb":
      return null;
  }
}

function updateSpec(origin: Origin, latest: string): string {
  if (origin.kind === "registry") return `registry:${origin.package}@${latest}`;
  if (origin.kind === "pypi") return `pypi:${origin.package}==${latest}`;
  return `npm:${origin.package}@${latest}`;
}

async function checkOne(origin: Origin, ctx: SourceCheckContext): Promise<SourceCheck> {
  try {
    const latest = await latestOf(origin, ctx);
    const outdated = latest !== null && isNewer(origin.kind, latest, origin.installed);
    return { ...origin, latest, outdated, update: outdated ? updateSpec(origin, latest!) : null, error: null };
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return {
      ...origin,
      latest: null,
      outdated: false,
      update: null,
      error: { code: error.code, message: error.message },
    };
  }
}

/** What each app's source offers now; an app from no package source is left out. Four sources are asked at a time. */
export async function checkInstalledSources(
  apps: readonly CheckedApp[],
  ctx: SourceCheckContext,
): Promise<SourceCheck[]> {
  const origins = apps.map((app) => originOf(app, ctx.appsDir)).filter((o): o is Origin => o !== null);
  const checks: SourceCheck[] = [];
  for (let at = 0; at < origins.length; at += 4)
    checks.push(...(await Promise.all(origins.slice(at, at + 4).map((origin) => checkOne(origin, ctx)))));
  return checks;
}
