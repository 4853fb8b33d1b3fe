// The capnp config `personalclaw start` hands to `workerd serve`: the worker bundle, its
// Durable Object namespaces with localDisk storage under <home>/state, an outbound network
// that reaches loopback only (the bridge and app backends), the dashboard files, and the
// listening socket. No dev-server layer sits on the request path. The backends socket (app
// backends' door) is wired to the worker's backendDoor entrypoint, so the worker knows by the
// socket, never by a header, that a request is an app's (workers/guards/backend-door.ts).
import { relative, dirname, join } from "node:path";
import {
  BACKEND_SLOTS,
  GATEWAY_SOCKET_FOLDER,
  GATEWAY_SOCKET_NAME,
  slotBinding,
  slotSocketName,
} from "../../kernel/contracts/backend-slots";
import { DURABLE_OBJECT_CLASSES } from "../durable-object-stores";

export interface WorkerdConfigInput {
  configPath: string;
  workerBundle: string;
  stateDir: string;
  webDir: string;
  appsDir: string;
  /** The tool stamp's folder (<home>/run/tool-stamp), the only one the worker may write outside its state. */
  toolStampDir: string;
  /** The bridge's runtime folder, where confined backends' slot sockets live. */
  runtimeDir: string;
  listen: string;
  bindings: Record<string, string>;
  /**
   * Whether workerd listens on the gateway's UNIX socket for backends' calls (default). Not under
   * `start --edge`: the bridge listens there and sends the calls to the edge over its link.
   */
  servesBackends?: boolean;
}

const capnpText = (value: string) => JSON.stringify(value);

/** Renders the capnp config text. Paths inside `embed` are relative to the config file. */
export function renderWorkerdConfig(input: WorkerdConfigInput): string {
  const bundle = relative(dirname(input.configPath), input.workerBundle);
  const slots = Array.from({ length: BACKEND_SLOTS }, (_, slot) => slot);
  const bindings = [
    ...DURABLE_OBJECT_CLASSES.map(
      (d) => `(name = ${capnpText(d.binding)}, durableObjectNamespace = ${capnpText(d.className)})`,
    ),
    `(name = "ASSETS", service = "web")`,
    `(name = "APP_FILES", service = "app-files")`,
    `(name = "TOOL_STAMP", service = "tool-stamp")`,
    // A BridgeLink delivers a paired bridge's calls back through this door (edge mode; workers/guards/link-door.ts).
    `(name = "LINK_DOOR", service = (name = "gateway", entrypoint = "linkDoor"))`,
    // A BridgeLink delivers a paired machine's app backends' calls through this door (edge mode).
    `(name = "APP_DOOR", service = (name = "gateway", entrypoint = "backendDoor"))`,
    ...slots.map((slot) => `(name = ${capnpText(slotBinding(slot))}, service = "app-slot-${slot}")`),
    ...Object.entries(input.bindings).map(([name, value]) => `(name = ${capnpText(name)}, text = ${capnpText(value)})`),
  ];
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "gateway", worker = .gateway),
    (name = "state", disk = (path = ${capnpText(input.stateDir)}, writable = true)),
    (name = "web", disk = (path = ${capnpText(input.webDir)}, writable = false)),
    (name = "app-files", disk = (path = ${capnpText(input.appsDir)}, writable = false, allowDotfiles = false)),
    (name = "tool-stamp", disk = (path = ${capnpText(input.toolStampDir)}, writable = true, allowDotfiles = false)),
    (name = "loopback", network = (allow = ["local"], deny = [])),
${slots.map((slot) => `    (name = "app-slot-${slot}", external = (address = ${capnpText(`unix:${join(input.runtimeDir, slotSocketName(slot))}`)}, http = ())),`).join("\n")}
  ],
  sockets = [
    (name = "http", address = ${capnpText(input.listen)}, http = (), service = "gateway"),
${
  input.servesBackends === false
    ? ""
    : `    (name = "backends", address = ${capnpText(`unix:${join(input.runtimeDir, GATEWAY_SOCKET_FOLDER, GATEWAY_SOCKET_NAME)}`)}, http = (), service = (name = "gateway", entrypoint = "backendDoor")),
`
}  ],
);

const gateway :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed ${capnpText(bundle)}) ],
  compatibilityDate = "2026-04-01",
  durableObjectNamespaces = [
${DURABLE_OBJECT_CLASSES.map((d) => `    (className = ${capnpText(d.className)}, uniqueKey = ${capnpText(d.uniqueKey)}, enableSql = true),`).join("\n")}
  ],
  durableObjectStorage = (localDisk = "state"),
  globalOutbound = "loopback",
  bindings = [
${bindings.map((b) => `    ${b},`).join("\n")}
  ],
);
`;
}
