// <home>/mcp.json, the JSON server map an MCP client reads ({"mcpServers": {name: entry}}, the
// format Claude Desktop and Claude Code read). The bridge writes only the `<app>:<server>`
// entries the installed apps declare, by exact name (MCP-02): every other entry and every other
// top-level key is kept as it is, and so are the owner's own flags on an app's entry
// (disabled, disabledTools, autoApprove, ...). Written whole through a 0600 temporary file and
// a rename, so a reader never sees half a file; a file that is not a JSON object is never
// overwritten (it is somebody's, and rewriting it would lose what they wrote).
import { existsSync, lstatSync, readFileSync } from "node:fs";
import { GatewayError } from "../../kernel/contracts/errors";
import type { AppManifest } from "../../kernel/contracts/manifest";
import { appNetworkGrant, grantPatterns, grantAllows } from "../../kernel/rules/network-grant";
import { mcpDefinition, mcpKey, remoteServerHost, type McpRegistration } from "../../kernel/contracts/mcp";
import { writePrivateFile } from "../private-file";
import { remoteServerHostRefusal } from "../egress/manifest-addresses";

/** The fields of an entry PersonalClaw writes; anything else on an app's entry is the owner's and kept. */
const WRITTEN_FIELDS = ["command", "args", "env", "type", "url", "cwd"] as const;

type ServerMap = Record<string, Record<string, unknown>>;

interface McpFile {
  doc: Record<string, unknown>;
  servers: ServerMap;
}

function unreadable(path: string, reason: string): GatewayError {
  return new GatewayError("mcp_json_unreadable", { vars: { path, reason } });
}

function readMcpFile(path: string): McpFile {
  if (!existsSync(path)) return { doc: {}, servers: {} };
  if (lstatSync(path).isSymbolicLink())
    throw unreadable(path, "it is a link; the bridge writes only a file of its own");
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw unreadable(path, error instanceof Error ? error.message : String(error));
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) throw unreadable(path, "it is not a JSON object");
  const servers = (doc as Record<string, unknown>).mcpServers ?? {};
  if (servers === null || typeof servers !== "object" || Array.isArray(servers))
    throw unreadable(path, "its mcpServers is not an object");
  return { doc: doc as Record<string, unknown>, servers: { ...(servers as ServerMap) } };
}

function writeMcpFile(path: string, file: McpFile): void {
  writePrivateFile(path, `${JSON.stringify({ ...file.doc, mcpServers: file.servers }, null, 2)}\n`);
}

/** What the bridge needs to write an app's entries. */
export interface McpLaunchCommand {
  /** The personalclaw command (bin/personalclaw.mjs of this package). */
  cli: string;
  home: string;
}

/** A stdio server's entry: `personalclaw mcp run <app> <server> --home <home>`, which starts it in the app's sandbox. */
function launchEntry(launch: McpLaunchCommand, name: string, server: string) {
  return { command: launch.cli, args: ["mcp", "run", name, server, "--home", launch.home] };
}

/**
 * Points every `mcp run` entry of a home that was written elsewhere (a restored archive) at
 * `launch`: an entry still naming the archived home would start its servers against that home.
 * Answers the keys it changed; every other entry and key is kept.
 */
export function rehomeMcpEntries(path: string, launch: McpLaunchCommand): string[] {
  if (!existsSync(path)) return [];
  const file = readMcpFile(path);
  const changed: string[] = [];
  for (const [key, entry] of Object.entries(file.servers)) {
    const args = entry.args;
    if (!Array.isArray(args) || args.length !== 6 || args[0] !== "mcp" || args[1] !== "run" || args[4] !== "--home")
      continue;
    const [name, server] = [String(args[2]), String(args[3])];
    if (mcpKey(name, server) !== key) continue;
    file.servers[key] = { ...entry, ...launchEntry(launch, name, server) };
    changed.push(key);
  }
  if (changed.length > 0) writeMcpFile(path, file);
  return changed;
}

function ownerFlags(entry: Record<string, unknown> | undefined): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(entry ?? {})) if (!(WRITTEN_FIELDS as readonly string[]).includes(k)) kept[k] = v;
  return kept;
}

/**
 * The file's writer. One write at a time inside the bridge: each read-change-write runs after
 * the previous one finished, so two lifecycle steps never lose each other's entries.
 */
export class McpJson {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly path: string,
    private readonly launch: McpLaunchCommand,
  ) {}

  private serial<T>(work: () => T): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Writes the app's declared servers. A stdio server's entry is `personalclaw mcp run <app>
   * <server>`, which starts it in the app's sandbox; a remote one is written only when its host
   * is in the app's network grant. `off` names the servers the owner turned off; `previous`
   * (an update) names servers the app no longer declares, which are removed.
   */
  register(
    name: string,
    manifest: AppManifest,
    off: readonly string[],
    previous?: AppManifest,
  ): Promise<McpRegistration> {
    return this.serial(() => {
      const file = readMcpFile(this.path);
      const result: McpRegistration = { registered: [], skipped: [], removed: [] };
      const declared = new Set(Object.keys(manifest.mcpServers ?? {}));
      for (const server of Object.keys(previous?.mcpServers ?? {})) {
        const key = mcpKey(name, server);
        if (!declared.has(server) && Object.hasOwn(file.servers, key)) {
          delete file.servers[key];
          result.removed.push(key);
        }
      }
      const grant = grantPatterns(appNetworkGrant(manifest));
      for (const server of [...declared].sort()) {
        const key = mcpKey(name, server);
        const definition = mcpDefinition(manifest, server)!;
        const kept = ownerFlags(file.servers[key]);
        if (off.includes(server)) kept.disabled = true;
        else if (kept.disabled === true) delete kept.disabled;
        if (definition.transport === "http") {
          const remote = remoteServerHost(definition);
          if (!remote || !grantAllows(grant, remote.host, remote.port)) {
            // Not reachable under its grant: never registered, and an earlier entry goes (MCP-11).
            if (Object.hasOwn(file.servers, key)) delete file.servers[key];
            result.skipped.push({
              key,
              reason: `its host ${remote ? `${remote.host}:${remote.port}` : "(none)"} is not in the app's network grant`,
            });
            continue;
          }
          // The agent dials it itself: an app installed before the preview refused such a URL
          // never gets it written either.
          const refused = remoteServerHostRefusal(remote.host);
          if (refused !== null) {
            if (Object.hasOwn(file.servers, key)) delete file.servers[key];
            result.skipped.push({ key, reason: `${refused}: an agent may not be pointed at it` });
            continue;
          }
          file.servers[key] = { ...kept, type: "http", url: definition.url };
        } else {
          file.servers[key] = { ...kept, ...launchEntry(this.launch, name, server) };
        }
        result.registered.push(key);
      }
      writeMcpFile(this.path, file);
      return result;
    });
  }

  /** Removes exactly the `<app>:<server>` entries the manifest declares; an entry it did not declare is not the app's, even under its prefix (MCP-02). */
  deregister(name: string, manifest: AppManifest): Promise<McpRegistration> {
    return this.serial(() => {
      const file = readMcpFile(this.path);
      const removed: string[] = [];
      for (const server of Object.keys(manifest.mcpServers ?? {})) {
        const key = mcpKey(name, server);
        if (Object.hasOwn(file.servers, key)) {
          delete file.servers[key];
          removed.push(key);
        }
      }
      if (removed.length > 0) writeMcpFile(this.path, file);
      return { registered: [], skipped: [], removed };
    });
  }

  /** Sets the owner's `disabled` flag on a registered entry (an absent entry is left absent). */
  flag(key: string, enabled: boolean): Promise<{ key: string; present: boolean }> {
    return this.serial(() => {
      const file = readMcpFile(this.path);
      const entry = file.servers[key];
      if (!entry) return { key, present: false };
      if (enabled) delete entry.disabled;
      else entry.disabled = true;
      writeMcpFile(this.path, file);
      return { key, present: true };
    });
  }
}
