// A page of one MCP Registry's entries for the dashboard's Store: GET <base>/v0.1/servers with
// version=latest, the owner's search and the registry's cursor, fetched under the egress address
// rules like every source (vetted-fetch.ts). Only a registry the owner configured in
// install.mcp_registries is asked. Each entry is parsed with the one entry schema; one that does
// not parse, or that the registry marks deleted, is left out rather than failing the page.
// Provenance is the registry asked: "official" only for the official registry's own URL.
import { z } from "zod";
import { GatewayError } from "../../kernel/contracts/errors";
import {
  isOfficialMcpRegistry,
  OFFICIAL_META_KEY,
  RegistryServerResponseSchema,
  registryUrlKey,
} from "../../kernel/contracts/mcp-registry";
import type { RegistryListingEntry } from "../../kernel/contracts/package-sources";
import { parseStrictJson } from "../../kernel/text/strict-json";
import { vettedFetch, type VettedFetchOptions } from "./vetted-fetch";

/** A page of entries is a few hundred KiB at most; an answer past this is refused, never parsed. */
const MAX_PAGE_BYTES = 8 * 1024 * 1024;
const PAGE_TIMEOUT_MS = 30_000;
/** Entries asked for per page. */
export const LISTING_PAGE_SIZE = 30;

const ListingAnswerSchema = z.object({
  servers: z.array(z.unknown()).max(1000),
  metadata: z.object({ nextCursor: z.string().max(1024).nullable().optional() }).optional(),
});

export interface ListingRequest {
  /** install.mcp_registries, in order. */
  registries: readonly string[];
  registry?: string;
  search?: string;
  cursor?: string;
  resolve?: VettedFetchOptions["resolve"];
}

/** The configured registry the request names (compared as a place), or the first one. */
function chosenRegistry(registries: readonly string[], asked: string | undefined): string | null {
  if (asked === undefined) return registries[0] ?? null;
  let key: string;
  try {
    key = registryUrlKey(asked);
  } catch {
    key = "";
  }
  const found = registries.find((url) => registryUrlKey(url) === key);
  if (found === undefined)
    throw new GatewayError("mcp_registry_not_configured", { vars: { registry: asked.slice(0, 300) } });
  return found;
}

/** The URL of a listing page on `registry` (a base URL, possibly with a path of its own). */
export function listingUrl(registry: string, search: string | undefined, cursor: string | undefined): string {
  const url = new URL("v0.1/servers", registry.endsWith("/") ? registry : `${registry}/`);
  url.searchParams.set("version", "latest");
  url.searchParams.set("limit", String(LISTING_PAGE_SIZE));
  if (search) url.searchParams.set("search", search);
  if (cursor) url.searchParams.set("cursor", cursor);
  return url.toString();
}

/** One listed entry as the Store shows it, from `registry`; null for one that does not parse or is marked deleted. */
export function listingEntry(registry: string, value: unknown): RegistryListingEntry | null {
  const parsed = RegistryServerResponseSchema.safeParse(value);
  if (!parsed.success || parsed.data._meta?.[OFFICIAL_META_KEY]?.status === "deleted") return null;
  const { server } = parsed.data;
  return {
    registry,
    official: isOfficialMcpRegistry(registry),
    name: server.name,
    version: server.version,
    title: server.title ?? null,
    description: server.description?.slice(0, 500) ?? null,
    repository: server.repository?.url ?? null,
    packages: (server.packages ?? []).map((p) => ({
      registryType: p.registryType,
      identifier: p.identifier,
      version: p.version ?? null,
    })),
    spec: `registry:${server.name}`,
  };
}

/** One page of the chosen registry's latest entries; the configured registries with their provenance. */
export async function listRegistryEntries(request: ListingRequest) {
  const registries = request.registries.map((url) => ({ url, official: isOfficialMcpRegistry(url) }));
  const registry = chosenRegistry(request.registries, request.registry);
  if (registry === null) return { registries, registry, entries: [], nextCursor: null };
  const answer = await vettedFetch(listingUrl(registry, request.search, request.cursor), {
    source: registry,
    maxBytes: MAX_PAGE_BYTES,
    accept: "application/json",
    timeoutMs: PAGE_TIMEOUT_MS,
    ...(request.resolve ? { resolve: request.resolve } : {}),
  });
  if (answer.status !== 200)
    throw new GatewayError("source_unreachable", {
      vars: { source: registry, reason: `it answered ${answer.status} for its list of servers` },
    });
  const json = parseStrictJson(answer.bytes.toString("utf8"));
  const page = json.ok ? ListingAnswerSchema.safeParse(json.value) : null;
  if (!page?.success)
    throw new GatewayError("source_unreachable", {
      vars: { source: registry, reason: "its list of servers is not the registry API's answer" },
    });
  const entries = page.data.servers
    .map((value) => listingEntry(registry, value))
    .filter((e): e is RegistryListingEntry => e !== null);
  return { registries, registry, entries, nextCursor: page.data.metadata?.nextCursor ?? null };
}
