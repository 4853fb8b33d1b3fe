// The one check of a folder the owner grants to an app, and the one way it reaches a sandbox.
// Threat: a grant is the only thing that widens what an app sees of the owner's disk, so a path
// that resolves somewhere else than the owner read (a link on the way, `..`, a folder swapped
// for a link after it was chosen) would hand the app whatever that somewhere is: the
// PersonalClaw home with .local_secret and every other app, /etc, the whole home. The path is
// walked name by name without following any link, checked against what must stay hidden, and at
// each start opened without following links and bound by its descriptor (bwrap --bind-fd), so
// what the app sees is the folder that was checked, not whatever the path names a moment later.
import { closeSync, constants, fstatSync, lstatSync, openSync, realpathSync, type Stats } from "node:fs";
import path from "node:path";
import type { StdioOptions } from "node:child_process";
import { errorMessage, type ErrorCode } from "../../kernel/contracts/errors.js";
import {
  folderEnvName,
  folderInside,
  type FolderAccess,
  type FolderGrant,
} from "../../kernel/contracts/folder-grants.js";
import { openedPath } from "../opened-path";
import { withDescriptor } from "../supervisor/spawn-child";
import type { ChildIdentity } from "./child-identity";

/** Folders that are the system's: none of them, and nothing inside them, is ever granted. */
const SYSTEM_TREES = [
  "/bin",
  "/boot",
  "/dev",
  "/etc",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/proc",
  "/run",
  "/sbin",
  "/sys",
  "/usr",
] as const;

/** Folders shared by the whole machine: refused as a whole; a folder inside one may be granted. */
const SHARED_TOPS = ["/home", "/root", "/tmp", "/var", "/srv", "/opt", "/mnt", "/media", "/snap"] as const;

/** The first descriptor a granted folder is handed to bwrap on (3-7 are the sandbox's own, spawn-child.ts). */
export const FIRST_FOLDER_FD = 8;

export interface FolderCheckContext {
  /** PERSONALCLAW_HOME: neither it, anything in it (every app's folder) nor a folder holding it is granted. */
  home: string;
  /** The owner's home folder: granted whole only when the owner says so explicitly. */
  ownerHome: string;
  /** A root gateway's child identity (nobody): the folder must be usable by it; null: children run as the owner. */
  identity: ChildIdentity | null;
  /** The bridge's own uid (the owner); default process.getuid(). */
  uid?: number;
}

export type FolderRefusal = { ok: false; code: ErrorCode; message: string; vars: Record<string, string> };
export type FolderCheck = { ok: true; path: string } | FolderRefusal;

function refused(code: ErrorCode, vars: Record<string, string>): FolderRefusal {
  return { ok: false, code, message: errorMessage(code, vars), vars };
}

function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** The real path of a folder the gateway itself names (its home may lie under a link such as /tmp on macOS-like setups). */
function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** Walks `requested` one name at a time with lstat: the folder's stat, or the refusal for the first link or gap. */
function walkWithoutLinks(requested: string): { ok: true; stat: Stats } | FolderRefusal {
  const parts = requested.split("/").filter((part) => part !== "");
  let here = "/";
  let stat: Stats = lstatSync("/");
  for (const part of parts) {
    here = path.join(here, part);
    try {
      stat = lstatSync(here);
    } catch {
      return refused("folder_path_missing", { path: requested });
    }
    if (stat.isSymbolicLink()) return refused("folder_path_link", { path: requested, link: here });
  }
  if (!stat.isDirectory()) return refused("folder_path_not_a_folder", { path: requested });
  return { ok: true, stat };
}

/** Why `folder` (a real path) must stay hidden from every app, or null when it may be granted. */
function hiddenReason(folder: string, ctx: FolderCheckContext): string | null {
  if (folder === "/") return "it is the whole disk";
  for (const home of new Set([path.resolve(ctx.home), realOrSelf(ctx.home)])) {
    if (isInside(folder, home))
      return "it lies in the PersonalClaw home, which holds its secrets and every app's folder";
    if (isInside(home, folder)) return "it holds the PersonalClaw home, which holds its secrets and every app's folder";
  }
  if (SYSTEM_TREES.some((tree) => isInside(folder, tree))) return "it is a system folder";
  if ((SHARED_TOPS as readonly string[]).includes(folder)) return "it is a folder the whole machine shares";
  return null;
}

function isWholeHome(folder: string, ctx: FolderCheckContext): boolean {
  const ownerHome = realOrSelf(ctx.ownerHome);
  return folder === ownerHome || path.dirname(folder) === "/home";
}

/** Whether `identity` may read (and, for read-write, write) the folder itself, by its mode bits alone. */
function childMay(stat: Stats, identity: ChildIdentity, access: FolderAccess): boolean {
  const shift = stat.uid === identity.uid ? 6 : stat.gid === identity.gid ? 3 : 0;
  const bits = (stat.mode >> shift) & 0o7;
  const needed = access === "read-write" ? 0o7 : 0o5;
  return (bits & needed) === needed;
}

/**
 * Whether `requested` may be granted with `access`: its real path (it must already be one), or
 * the refusal with its stable code. Refused: a relative path or one with `.`/`..`; a link in any
 * component; `/`, a system folder, a machine-wide top folder; the PersonalClaw home, anything in
 * it, anything holding it; a whole home folder unless `wholeHome`; a folder another user owns
 * (as root: one the child identity cannot use, since a root gateway's child runs as nobody and
 * PersonalClaw never changes the owner's folder to suit it).
 */
export function checkGrantableFolder(
  requested: string,
  access: FolderAccess,
  wholeHome: boolean,
  ctx: FolderCheckContext,
): FolderCheck {
  const trimmed = requested.length > 1 ? requested.replace(/\/+$/, "") : requested;
  const parts = trimmed.split("/");
  if (!path.isAbsolute(trimmed) || trimmed.includes("\0") || parts.some((part) => part === "." || part === ".."))
    return refused("folder_path_invalid", { path: requested });
  const folder = path.normalize(trimmed);
  const walked = walkWithoutLinks(folder);
  if (!walked.ok) return walked;
  const hidden = hiddenReason(folder, ctx);
  if (hidden !== null) return refused("folder_path_refused", { path: folder, reason: hidden });
  if (!wholeHome && isWholeHome(folder, ctx)) return refused("folder_path_whole_home", { path: folder });
  const uid = ctx.uid ?? process.getuid?.() ?? -1;
  if (ctx.identity === null && walked.stat.uid !== uid) return refused("folder_path_not_owned", { path: folder });
  if (ctx.identity !== null && !childMay(walked.stat, ctx.identity, access))
    return refused("folder_path_unreachable", {
      path: folder,
      user: ctx.identity.name,
      access: access === "read-write" ? "read and write" : "read",
    });
  return { ok: true, path: folder };
}

/** A granted folder opened for one start: the descriptor bwrap binds, closed by the bridge once spawned. */
export interface OpenedFolder {
  need: string;
  path: string;
  fd: number;
  writable: boolean;
}

/** A start refused because a granted folder is no longer the one the owner chose: which need, its chosen path, why. */
export interface GrantedFolderRefusal {
  ok: false;
  need: string;
  path: string;
  code: "folder_grant_changed";
  reason: string;
}

/**
 * Checks every grant again and opens each folder without following a link; the descriptor's
 * own path (the kernel's) must be the checked path, so a folder on the way swapped for a link
 * between the check and the open is caught too. A refusal closes what was opened and names the
 * need: the start is refused rather than run with a folder the owner did not choose.
 */
export function openGrantedFolders(
  grants: readonly FolderGrant[],
  ctx: FolderCheckContext,
): { ok: true; folders: OpenedFolder[] } | GrantedFolderRefusal {
  const folders: OpenedFolder[] = [];
  const fail = (grant: FolderGrant, why: string): GrantedFolderRefusal => {
    closeGrantedFolders(folders);
    const reason = errorMessage("folder_grant_changed", { need: grant.need, reason: why });
    return { ok: false, need: grant.need, path: grant.path, code: "folder_grant_changed", reason };
  };
  for (const grant of grants) {
    const checked = checkGrantableFolder(grant.path, grant.access, grant.wholeHome === true, ctx);
    if (!checked.ok) return fail(grant, `${checked.code}: ${checked.message}`);
    if (checked.path !== grant.path) return fail(grant, `'${grant.path}' is no longer the path that was chosen`);
    let fd: number;
    try {
      fd = openSync(grant.path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    } catch (error) {
      return fail(grant, `'${grant.path}' could not be opened: ${(error as Error).message}`);
    }
    folders.push({ need: grant.need, path: grant.path, fd, writable: grant.access === "read-write" });
    if (openedPath(fd) !== grant.path || !fstatSync(fd).isDirectory())
      return fail(grant, `'${grant.path}' changed while it was opened (a link on the way?)`);
  }
  return { ok: true, folders };
}

/** Closes the bridge's copies of the descriptors; the sandbox keeps its bind mounts. */
export function closeGrantedFolders(folders: readonly OpenedFolder[]): void {
  for (const folder of folders) {
    try {
      closeSync(folder.fd);
    } catch {
      // already closed
    }
  }
}

/** What the mount plan binds: each folder on its descriptor in the child (FIRST_FOLDER_FD onwards). */
export function folderMounts(folders: readonly OpenedFolder[]): Array<{ need: string; fd: number; writable: boolean }> {
  return folders.map((folder, i) => ({ need: folder.need, fd: FIRST_FOLDER_FD + i, writable: folder.writable }));
}

/** The child's descriptors with each opened folder at its number in folderMounts. */
export function withFolderDescriptors(stdio: StdioOptions, folders: readonly OpenedFolder[]): StdioOptions {
  return folders.reduce((list, folder, i) => withDescriptor(list, FIRST_FOLDER_FD + i, folder.fd), stdio);
}

/**
 * PERSONALCLAW_FOLDER_<NEED> for each folder: /folders/<need> inside a sandbox; unconfined
 * (sandbox.mode "off", where nothing is hidden anyway), the folder's own path.
 */
export function folderEnvironment(folders: readonly OpenedFolder[], sandboxed: boolean): Record<string, string> {
  return Object.fromEntries(
    folders.map((folder) => [folderEnvName(folder.need), sandboxed ? folderInside(folder.need) : folder.path]),
  );
}
