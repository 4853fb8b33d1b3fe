// Who an app child is on the host. Threat: bubblewrap maps a root gateway's child to host uid 0,
// and the kernel checks some interfaces by uid rather than by capability (a write to
// /proc/sys/kernel/core_pattern from "uid 0 without capabilities" succeeds, and with
// `|<program>` and one crash the kernel runs that program as host root). So when the gateway
// runs as root, every child runs as an unprivileged host user instead: bwrap sets up the box
// with root's rights, keeps only CAP_SETUID/SETGID/SETPCAP, and the system's `setpriv` drops
// to that user, its groups, every capability and the bounding set before the app's program
// runs. As any other owner, a child runs as the owner, mapped through a user namespace.
import { execFileSync } from "node:child_process";
import { existsSync, lchownSync, readFileSync } from "node:fs";
import path from "node:path";
import { findSetpriv } from "../supervisor/workerd-supervisor";
import { GATEWAY_SOCKET_FOLDER, GATEWAY_SOCKET_NAME } from "../../kernel/contracts/backend-slots";

/** The host user a root gateway's children run as. */
export interface ChildIdentity {
  uid: number;
  gid: number;
  /** The account's name in /etc/passwd (nobody on most systems), for doctor and the docs. */
  name: string;
  /** The system's setpriv, inside the box's /usr: the step that drops to this user. */
  setpriv: string;
}

/** The user a root gateway's children run as: nobody (65534) and its group, as the system names them. */
export const UNPRIVILEGED_ACCOUNT = { user: "nobody", groups: ["nogroup", "nobody"], fallbackId: 65534 } as const;

/** The id (third field) of the first of `names` that `file` (/etc/passwd or /etc/group) lists. */
function idOf(file: string, names: readonly string[], fallback: number): number {
  let lines: string[];
  try {
    lines = readFileSync(file, "utf8").split("\n");
  } catch {
    return fallback; // no such file: the conventional id
  }
  for (const name of names) {
    const id = Number(lines.find((line) => line.startsWith(`${name}:`))?.split(":")[2]);
    if (Number.isInteger(id) && id > 0) return id;
  }
  return fallback;
}

/**
 * The identity a child needs when this process is root, or null when it is not (children then
 * run as the owner). `{ ok: false }` when root and no system setpriv exists: the sandbox probe
 * reports that rather than run a child as host root.
 */
export function childIdentity(
  uid: number = process.getuid?.() ?? -1,
): { ok: true; identity: ChildIdentity | null } | { ok: false; reason: string } {
  if (uid !== 0) return { ok: true, identity: null };
  const setpriv = findSetpriv(undefined);
  if (setpriv === null)
    return {
      ok: false,
      reason:
        "the gateway runs as root and setpriv (util-linux) is missing from /usr/bin and /bin: app children would run as host root",
    };
  const { user, groups, fallbackId } = UNPRIVILEGED_ACCOUNT;
  return {
    ok: true,
    identity: {
      uid: idOf("/etc/passwd", [user], fallbackId),
      gid: idOf("/etc/group", groups, fallbackId),
      name: user,
      setpriv,
    },
  };
}

/** The words in front of the app's program that drop a root-started box to `identity`. */
export function dropPrivilegeArgs(identity: ChildIdentity): string[] {
  return [
    identity.setpriv,
    `--reuid=${identity.uid}`,
    `--regid=${identity.gid}`,
    "--clear-groups",
    "--inh-caps=-all",
    "--bounding-set=-all",
    "--",
  ];
}

/**
 * Makes every entry under the folders a child may write owned by `identity`, so it can write
 * its data/ (and an installer its output). Threat: the walk runs as root while another of the
 * app's children (an MCP server an agent runs) may be writing the same data/: a folder swapped
 * for a link between reading it and descending into it would lead root's chown outside data/
 * (/etc). So the walk is coreutils' `chown -R -P -h`, which descends through directory
 * descriptors (openat, O_NOFOLLOW) and changes links themselves, never what they name.
 */
export function handOverWritable(folders: readonly string[], identity: ChildIdentity): void {
  if (folders.length === 0) return;
  const chown = ["/usr/bin/chown", "/bin/chown"].find((file) => existsSync(file));
  if (!chown) throw new Error("chown (coreutils) is missing from /usr/bin and /bin");
  execFileSync(chown, ["-R", "-P", "-h", `${identity.uid}:${identity.gid}`, "--", ...folders], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { PATH: "/usr/bin:/bin" },
  });
}

/**
 * Makes one entry `identity`'s own, so a root gateway's child can use it: connect to a socket
 * (its broker's, the gateway's), search the folder holding one, read its backend's
 * .app_secret. Each lies in the 0700 home or runtime folder, which no other host user can
 * enter; inside a box it is bound read-only.
 */
export function handOverEntry(entry: string, identity: ChildIdentity | null): void {
  if (identity !== null) lchownSync(entry, identity.uid, identity.gid);
}

/**
 * After workerd (re)made its socket for calls back from backends: a root gateway's children
 * may connect to it. A no-op for any other owner, and when there is no socket yet.
 */
export function openGatewayDoor(runtimeDir: string): void {
  const found = childIdentity();
  if (!found.ok || found.identity === null) return;
  const folder = path.join(runtimeDir, GATEWAY_SOCKET_FOLDER);
  for (const entry of [folder, path.join(folder, GATEWAY_SOCKET_NAME)]) {
    try {
      handOverEntry(entry, found.identity);
    } catch {
      // not made yet: the next start of workerd hands it over
    }
  }
}
