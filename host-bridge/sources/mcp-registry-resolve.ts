// Resolves `registry:<server name>[@<version>]` through the owner's MCP Registries
// (install.mcp_registries, in order) with the registry API v0.1:
// GET <base>/v0.1/servers/<url-encoded name>/versions/<url-encoded version, or `latest`>, which
// answers one ServerResponse ({server: server.json, _meta}). The first registry that has the name
// answers for it; a registry that answers 404 passes the question on, and one that fails in any
// other way (unreachable, 5xx, not an entry, larger than any entry) stops here, so a failing
// registry never lets one later in the list answer in its place. Each fetch goes under the egress
// address rules (vetted-fetch.ts). Then one package is chosen: the first the entry lists that this
// gateway installs and runs over stdio (an npm or PyPI package at one exact version, or an .mcpb
// bundle pinned by its fileSha256); nothing of it is fetched here.
import semver from "semver";
import { GatewayError } from "../../kernel/contracts/errors";
import {
  MCP_SERVER_NAME,
  OFFICIAL_META_KEY,
  RegistryServerResponseSchema,
  type RegistryPackage,
  type RegistryServer,
} from "../../kernel/contracts/mcp-registry";
import { NpmPackageNameSchema } from "../../kernel/contracts/npm-closure";
import { parseStrictJson } from "../../kernel/text/strict-json";
import { releaseOf } from "./python-versions";
import { vettedFetch, type VettedFetchOptions } from "./vetted-fetch";

/** One version's entry is a few KiB; an answer past this is refused, never parsed. */
export const MAX_ENTRY_BYTES = 1024 * 1024;
const ENTRY_TIMEOUT_MS = 30_000;
const PYPI_PROJECT = /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/;
/** server.json's fileSha256: the hex sha256 of a bundle's whole file. */
const FILE_SHA256 = /^[a-f0-9]{64}$/;
/** A registry version names one release: no range, wildcard or tag (server.json refuses them too). */
const EXACT_ENTRY_VERSION = /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,254}$/;

export interface RegistrySpec {
  name: string;
  /** null: the registry's latest version of the entry. */
  version: string | null;
}

/** Why `registry:<rest>` is not a server name with an optional exact version, or the spec. */
export function parseRegistrySpec(rest: string): RegistrySpec | { refusal: string } {
  const at = rest.indexOf("@");
  const name = at < 0 ? rest : rest.slice(0, at);
  const version = at < 0 ? null : rest.slice(at + 1);
  if (!MCP_SERVER_NAME.test(name) || name.length > 200)
    return { refusal: `'${name}' is not an MCP Registry server name such as io.github.owner/server` };
  if (
    version !== null &&
    (!EXACT_ENTRY_VERSION.test(version) || version === "latest" || /(^|\.)[xX*](\.|$)/.test(version))
  )
    return { refusal: `'${version}' is not one exact version (leave @<version> out for the latest)` };
  return { name, version };
}

export interface RegistryEntryRequest extends RegistrySpec {
  /** install.mcp_registries: asked in this order. */
  registries: readonly string[];
  resolve?: VettedFetchOptions["resolve"];
}

export interface ResolvedRegistryEntry {
  /** The registry that answered, as the owner wrote it in install.mcp_registries. */
  registry: string;
  server: RegistryServer;
}

function invalid(registry: string, name: string, reason: string): GatewayError {
  return new GatewayError("mcp_registry_answer_invalid", { vars: { registry, name, reason } });
}

/** The URL of one version's entry on `registry` (a base URL, possibly with a path of its own). */
export function entryUrl(registry: string, name: string, version: string | null): string {
  const base = registry.endsWith("/") ? registry : `${registry}/`;
  return new URL(
    `v0.1/servers/${encodeURIComponent(name)}/versions/${encodeURIComponent(version ?? "latest")}`,
    base,
  ).toString();
}

/** Reads one registry's answer: the entry, null when it has none (404), a refusal otherwise. */
async function askRegistry(request: RegistryEntryRequest, registry: string): Promise<RegistryServer | null> {
  const answer = await vettedFetch(entryUrl(registry, request.name, request.version), {
    source: registry,
    maxBytes: MAX_ENTRY_BYTES,
    accept: "application/json",
    timeoutMs: ENTRY_TIMEOUT_MS,
    ...(request.resolve ? { resolve: request.resolve } : {}),
  });
  if (answer.status === 404) return null;
  if (answer.status !== 200)
    throw new GatewayError("source_unreachable", {
      vars: { source: registry, reason: `it answered ${answer.status} for ${request.name}` },
    });
  const parsed = parseStrictJson(answer.bytes.toString("utf8"));
  if (!parsed.ok) throw invalid(registry, request.name, `its answer is not JSON (${parsed.reason})`);
  const entry = RegistryServerResponseSchema.safeParse(parsed.value);
  if (!entry.success) {
    const issue = entry.error.issues[0]!;
    throw invalid(registry, request.name, `${issue.path.join(".") || "the answer"}: ${issue.message}`);
  }
  const { server, _meta } = entry.data;
  // The answer must be the entry asked for: a registry cannot hand over another name or version.
  if (server.name !== request.name)
    throw invalid(registry, request.name, `it answered with the entry of ${server.name.slice(0, 200)}`);
  if (request.version !== null && server.version !== request.version)
    throw invalid(registry, request.name, `it answered with version ${server.version.slice(0, 64)}`);
  // Only a reason to refuse, never to trust: the official registry marks what its moderation removed.
  if (_meta?.[OFFICIAL_META_KEY]?.status === "deleted")
    throw new GatewayError("mcp_registry_entry_unusable", {
      vars: {
        name: `${request.name}@${server.version}`,
        reason: `${registry} marks it deleted (the registry's moderation removes malware and spam)`,
      },
    });
  return server;
}

/** The entry from the first of the owner's registries that has it. */
export async function resolveRegistryEntry(request: RegistryEntryRequest): Promise<ResolvedRegistryEntry> {
  for (const registry of request.registries) {
    const server = await askRegistry(request, registry);
    if (server !== null) return { registry, server };
  }
  throw new GatewayError("mcp_registry_entry_not_found", {
    vars: {
      name: request.name,
      version: request.version ?? "latest",
      registries: request.registries.length > 0 ? request.registries.join(", ") : "none configured",
    },
  });
}

export type ChosenPackage =
  | {
      kind: "npm" | "pypi";
      name: string;
      version: string;
      /** The entry's package as it listed it (its variables and arguments). */
      listed: RegistryPackage;
    }
  | { kind: "mcpb"; url: string; sha256: string; listed: RegistryPackage };

function describeListed(server: RegistryServer): string {
  const packages = (server.packages ?? []).map(
    (p) => `${p.registryType.slice(0, 32)} over ${(p.transport?.type ?? "stdio").slice(0, 32)}`,
  );
  const remotes = (server.remotes ?? []).length > 0 ? ["a remote server (a URL, not a package)"] : [];
  const listed = [...packages, ...remotes];
  return listed.length > 0 ? listed.join(", ") : "no package at all";
}

/** The exact version of the chosen package, or a refusal naming the range. */
function exactVersionOf(server: RegistryServer, kind: "npm" | "pypi", listed: RegistryPackage): string {
  const version = listed.version ?? "";
  const exact = kind === "npm" ? semver.valid(version) === version : releaseOf(version) !== null;
  if (!exact)
    throw new GatewayError("mcp_registry_version_not_exact", {
      vars: {
        name: server.name,
        type: kind,
        package: listed.identifier.slice(0, 214),
        version: version === "" ? "no version" : version.slice(0, 64),
      },
    });
  return version;
}

/** An .mcpb package: its http(s) URL (never a path on this machine) and the sha256 that pins its bytes. */
function bundleOf(server: RegistryServer, listed: RegistryPackage): ChosenPackage {
  const unusable = (reason: string) =>
    new GatewayError("mcp_registry_entry_unusable", { vars: { name: server.name, reason } });
  if (!/^https?:\/\//i.test(listed.identifier))
    throw unusable(`its .mcpb package '${listed.identifier.slice(0, 300)}' is not an http(s) URL`);
  if (listed.fileSha256 === undefined || !FILE_SHA256.test(listed.fileSha256))
    throw unusable("its .mcpb package pins no fileSha256, the hash its bytes are checked against");
  return { kind: "mcpb", url: listed.identifier, sha256: listed.fileSha256, listed };
}

/**
 * The package to install: the first the entry lists that this gateway installs and runs over
 * stdio — an npm or PyPI package at its one exact version, or an .mcpb bundle pinned by its
 * fileSha256. An entry only in forms this gateway does not run (a container image, a NuGet
 * package, a remote) is refused.
 */
export function choosePackage(server: RegistryServer): ChosenPackage {
  for (const listed of server.packages ?? []) {
    const stdio = (listed.transport?.type ?? "stdio") === "stdio";
    if (listed.registryType === "mcpb" && stdio) return bundleOf(server, listed);
    if ((listed.registryType !== "npm" && listed.registryType !== "pypi") || !stdio) continue;
    const kind = listed.registryType;
    const nameOk =
      kind === "npm" ? NpmPackageNameSchema.safeParse(listed.identifier).success : PYPI_PROJECT.test(listed.identifier);
    if (!nameOk)
      throw new GatewayError("mcp_registry_entry_unusable", {
        vars: {
          name: server.name,
          reason: `its ${kind} package '${listed.identifier.slice(0, 214)}' is not a ${kind} name`,
        },
      });
    return { kind, name: listed.identifier, version: exactVersionOf(server, kind, listed), listed };
  }
  throw new GatewayError("mcp_registry_no_supported_package", {
    vars: { name: server.name, listed: describeListed(server) },
  });
}
