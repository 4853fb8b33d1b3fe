// The bridge's operations on what the owner keeps under the home: config.json (read as it is
// now, written for the next start; the running supervisor keeps this start's), the sealed
// secrets (values come in and are sealed; nothing answers one back) and the log's anchor.
import { GatewayError } from "../../kernel/contracts/errors";
import type { AppManifest } from "../../kernel/contracts/manifest";
import { readOwnerConfig, settingsDocument, writeOwnerSetting } from "../owner-config";
import { readAnchor } from "../sel-anchor";
import { EDGE_WORK } from "../../kernel/contracts/internal-work";
import type { HandlersUnder } from "../bridge-contract";
import type { BridgeRuntime } from "../bridge-runtime";

export function ownerOperations(
  rt: BridgeRuntime,
): HandlersUnder<"/config/"> & HandlersUnder<"/secrets/"> & HandlersUnder<"/sel/"> {
  const { paths } = rt.opts;
  return {
    // The edge's log has an anchor of its own: the machine's local one would call the edge's log forked.
    "GET /sel/anchor": async ({ work }) => readAnchor(work === EDGE_WORK ? paths.edgeSelAnchor : paths.selAnchor),
    "POST /config/read": async () => {
      const read = readOwnerConfig(paths.home);
      if (!read.ok) throw new GatewayError("config_file_invalid", { vars: { reason: read.reason } });
      return settingsDocument(read.config);
    },
    "POST /config/write": async ({ body }) => writeOwnerSetting(paths.home, body),
    "POST /secrets/list": async () => rt.secrets.list(),
    "POST /secrets/put": async ({ body: { name, value, consumers } }) => rt.secrets.put(name, value, consumers),
    "POST /secrets/delete": async ({ body: { name } }) => rt.secrets.delete(name),
    "POST /secrets/assign": async ({ body: { name, as, consumer, origins } }) => {
      rt.secrets.assign(name, as, consumer, origins);
      return { assigned: true };
    },
    "POST /secrets/unassign": async ({ body: { app, as } }) => ({ unassigned: rt.secrets.unassign(app, as) }),
    "POST /secrets/pending": async ({ body: { name, manifest, digest } }) => {
      const running = rt.supervisor.status(name)?.running === true;
      return {
        running,
        restartPending: running && rt.heldSecrets.restartPending(name, rt.secrets, manifest as AppManifest, digest),
      };
    },
    "POST /secrets/rebind": async ({ body: { app, fromDigest, toDigest, declared } }) => {
      rt.digests.set(app, toDigest);
      return rt.secrets.rebind(app, fromDigest, toDigest, declared);
    },
  };
}
