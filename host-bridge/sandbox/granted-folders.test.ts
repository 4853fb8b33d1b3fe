// Real files, real bubblewrap: which folders the owner may grant, and what an app child sees and
// may do in one that is granted. The fake owner home holds credential stores and a sibling
// folder; a grant must show exactly the chosen folder and nothing beside or above it.
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  readFileSync,
  existsSync,
  statSync,
} from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandboxAvailability, wrapInSandbox, type SandboxAvailability } from "./bubblewrap.js";
import { spawnChild } from "../supervisor/spawn-child.js";
import {
  checkGrantableFolder,
  closeGrantedFolders,
  folderEnvironment,
  folderMounts,
  openGrantedFolders,
  withFolderDescriptors,
  type FolderCheckContext,
  type OpenedFolder,
} from "./granted-folders.js";
import type { FolderGrant } from "../../kernel/contracts/folder-grants.js";
import { plantCredentialStores } from "../../test/fixtures/hostile/credential-stores.js";

let root: string;
let ownerHome: string;
let home: string;
let appDir: string;
let docs: string;
let sibling: string;
let shared: string;
let available: SandboxAvailability;
let ctx: FolderCheckContext;

function grant(need: string, folder: string, access: FolderGrant["access"] = "read"): FolderGrant {
  return { need, path: folder, access, grantedAt: new Date(0).toISOString() };
}

/** Runs `script` (Node) in the app's sandbox with the grants opened as a start opens them; its stdout parsed. */
async function inSandbox(grants: FolderGrant[], script: string): Promise<Record<string, unknown>> {
  const opened = openGrantedFolders(grants, ctx);
  if (!opened.ok) throw new Error(opened.reason);
  const folders: OpenedFolder[] = opened.folders;
  const cmd = wrapInSandbox(
    { file: "node", args: ["-e", script], cwd: appDir },
    {
      appDir,
      writable: [],
      home,
      ownerHome,
      pathEnv: "/usr/bin:/bin",
      bwrapPath: available.path,
      userNamespace: available.userNamespace,
      childIdentity: available.childIdentity ?? null,
      folders: folderMounts(folders),
    },
  );
  const env = { PATH: "/usr/bin:/bin", ...folderEnvironment(folders, true) };
  const child = spawnChild(
    { file: cmd.file, args: cmd.args, cwd: "/" },
    { env, stdio: withFolderDescriptors(["ignore", "pipe", "pipe"], folders), boxed: true },
  );
  closeGrantedFolders(folders);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  expect(code, stderr).toBe(0);
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** A Node script that tries each named operation and prints {name: "ok" | error code}. */
function attempts(ops: Record<string, string>): string {
  const body = Object.entries(ops)
    .map(
      ([name, op]) =>
        `try{${op};out[${JSON.stringify(name)}]="ok"}catch(e){out[${JSON.stringify(name)}]=e.code||String(e)}`,
    )
    .join(";");
  return `const fs=require("fs");const out={};${body};console.log(JSON.stringify(out))`;
}

beforeAll(async () => {
  available = await sandboxAvailability(process.env.PATH);
  // Not under /tmp: the sandbox's private /tmp would hide a folder there for the wrong reason.
  root = mkdtempSync(path.join("/var/tmp", "pc-folders-"));
  ownerHome = path.join(root, "owner");
  home = path.join(ownerHome, ".personalclaw");
  appDir = path.join(home, "apps", "indexer");
  mkdirSync(appDir, { recursive: true });
  mkdirSync(path.join(home, "apps", "other"), { recursive: true });
  writeFileSync(path.join(home, ".local_secret"), "local-secret");
  plantCredentialStores(ownerHome);
  docs = path.join(ownerHome, "Documents");
  sibling = path.join(ownerHome, "Private");
  shared = path.join(ownerHome, "Shared");
  for (const folder of [docs, sibling, shared]) mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(docs, "report.txt"), "quarterly");
  mkdirSync(path.join(docs, "sub"));
  writeFileSync(path.join(sibling, "diary.txt"), "private");
  // Links an app might use to climb out of its grant: to the sibling by absolute path, and by `..`.
  symlinkSync(path.join(sibling, "diary.txt"), path.join(docs, "to-diary"));
  symlinkSync("../Private", path.join(docs, "up"));
  // A root gateway's child runs as nobody: the owner makes the folders usable by it (never the bridge).
  chmodSync(docs, 0o755);
  chmodSync(path.join(docs, "sub"), 0o755);
  chmodSync(shared, 0o777);
  const uid = process.getuid?.() ?? -1;
  ctx = { home, ownerHome, identity: available.childIdentity ?? null, uid };
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("checkGrantableFolder", () => {
  const code = (p: string, opts: { wholeHome?: boolean; access?: "read" | "read-write" } = {}) => {
    const checked = checkGrantableFolder(p, opts.access ?? "read", opts.wholeHome ?? false, ctx);
    return checked.ok ? "ok" : checked.code;
  };

  it("grants a folder of the owner's, by its real path", () => {
    expect(checkGrantableFolder(docs, "read", false, ctx)).toEqual({ ok: true, path: docs });
    expect(checkGrantableFolder(`${docs}/`, "read", false, ctx)).toEqual({ ok: true, path: docs });
  });

  it("refuses the whole disk, system folders and machine-wide folders", () => {
    for (const p of ["/", "/etc", "/usr/share", "/proc/sys", "/tmp", "/var", "/home"])
      expect(code(p), p).toBe("folder_path_refused");
  });

  it("refuses the PersonalClaw home, any app's folder in it, and any folder holding it, whole home chosen or not", () => {
    for (const p of [home, appDir, path.join(home, "apps", "other"), root])
      expect(code(p, { wholeHome: true }), p).toBe("folder_path_refused");
    // The owner's home holds the PersonalClaw home here: choosing it whole explicitly does not help.
    expect(code(ownerHome, { wholeHome: true })).toBe("folder_path_refused");
  });

  it("refuses a whole home folder unless the owner chooses it explicitly", () => {
    const elsewhere = { ...ctx, ownerHome: docs };
    expect(checkGrantableFolder(docs, "read", false, elsewhere)).toMatchObject({ code: "folder_path_whole_home" });
    expect(checkGrantableFolder(docs, "read", true, elsewhere)).toEqual({ ok: true, path: docs });
  });

  it("refuses a link, a path through a link, `.` and `..`, a relative path, a file and a missing folder", () => {
    const link = path.join(root, "docs-link");
    symlinkSync(docs, link);
    expect(code(link)).toBe("folder_path_link");
    expect(code(path.join(docs, "up"))).toBe("folder_path_link");
    expect(code(path.join(link, "sub"))).toBe("folder_path_link");
    expect(code(`${docs}/../Private`)).toBe("folder_path_invalid");
    expect(code(`${docs}/./sub`)).toBe("folder_path_invalid");
    expect(code("Documents")).toBe("folder_path_invalid");
    expect(code(path.join(docs, "report.txt"))).toBe("folder_path_not_a_folder");
    expect(code(path.join(ownerHome, "nothing-here"))).toBe("folder_path_missing");
  });

  it("refuses a folder another user owns when children run as the owner", () => {
    const asOther = { ...ctx, identity: null, uid: 4242 };
    expect(checkGrantableFolder(docs, "read", false, asOther)).toMatchObject({ code: "folder_path_not_owned" });
  });

  it("as root, refuses a folder the unprivileged child cannot use, and never changes its mode", () => {
    if (!ctx.identity) return; // children run as the owner here: nothing to prove
    const closed = path.join(ownerHome, "Closed");
    mkdirSync(closed, { mode: 0o700 });
    expect(code(closed)).toBe("folder_path_unreachable");
    expect(code(docs, { access: "read-write" })).toBe("folder_path_unreachable");
    expect(code(shared, { access: "read-write" })).toBe("ok");
    // The check looked; it did not open the folder up.
    expect((statSync(closed).mode & 0o777).toString(8)).toBe("700");
  });
});

describe("a granted folder in the sandbox", () => {
  it("is visible only at /folders/<need>: not at its host path, and its siblings and the home stay hidden", async () => {
    const seen = await inSandbox(
      [grant("documents", docs)],
      `const fs=require("fs");const t=(f)=>{try{return f()}catch(e){return e.code}};console.log(JSON.stringify({
        folders:t(()=>fs.readdirSync("/folders")),
        docs:t(()=>fs.readdirSync("/folders/documents").sort()),
        report:t(()=>fs.readFileSync("/folders/documents/report.txt","utf8")),
        env:process.env.PERSONALCLAW_FOLDER_DOCUMENTS,
        hostPath:t(()=>fs.readdirSync(${JSON.stringify(docs)})),
        sibling:t(()=>fs.readdirSync(${JSON.stringify(sibling)})),
        ssh:t(()=>fs.readFileSync(${JSON.stringify(path.join(ownerHome, ".ssh/id_rsa"))},"utf8")),
        localSecret:t(()=>fs.readFileSync(${JSON.stringify(path.join(home, ".local_secret"))},"utf8")),
      }))`,
    );
    expect(seen).toEqual({
      folders: ["documents"],
      docs: ["report.txt", "sub", "to-diary", "up"],
      report: "quarterly",
      env: "/folders/documents",
      hostPath: "ENOENT",
      sibling: "ENOENT",
      ssh: "ENOENT",
      localSecret: "ENOENT",
    });
  });

  it("cannot be escaped through a link inside it or through `..`", async () => {
    const seen = await inSandbox(
      [grant("documents", docs)],
      attempts({
        absoluteLink: `fs.readFileSync("/folders/documents/to-diary")`,
        relativeLink: `fs.readdirSync("/folders/documents/up")`,
        dotdot: `fs.readFileSync("/folders/documents/../Private/diary.txt")`,
        dotdotList: `if(JSON.stringify(fs.readdirSync("/folders/documents/..").sort())!=='["documents"]')throw new Error("saw more")`,
      }),
    );
    expect(seen).toEqual({ absoluteLink: "ENOENT", relativeLink: "ENOENT", dotdot: "ENOENT", dotdotList: "ok" });
  });

  it("granted read-only, refuses every change: write, create, rename, chmod, link, remove", async () => {
    const seen = await inSandbox(
      [grant("documents", docs)],
      attempts({
        write: `fs.writeFileSync("/folders/documents/report.txt","changed")`,
        create: `fs.writeFileSync("/folders/documents/new.txt","x")`,
        rename: `fs.renameSync("/folders/documents/report.txt","/folders/documents/moved.txt")`,
        chmod: `fs.chmodSync("/folders/documents/report.txt",0o777)`,
        link: `fs.linkSync("/folders/documents/report.txt","/folders/documents/hard")`,
        symlink: `fs.symlinkSync("/etc/passwd","/folders/documents/soft")`,
        remove: `fs.unlinkSync("/folders/documents/report.txt")`,
      }),
    );
    for (const [op, outcome] of Object.entries(seen)) expect(outcome, op).toBe("EROFS");
    expect(readFileSync(path.join(docs, "report.txt"), "utf8")).toBe("quarterly");
    expect(existsSync(path.join(docs, "new.txt"))).toBe(false);
  });

  it("granted read-write, takes the app's writes, and only there", async () => {
    const seen = await inSandbox(
      [grant("documents", docs), grant("shared", shared, "read-write")],
      attempts({
        write: `fs.writeFileSync("/folders/shared/out.txt","written")`,
        other: `fs.writeFileSync("/folders/documents/out.txt","x")`,
      }),
    );
    expect(seen).toEqual({ write: "ok", other: "EROFS" });
    expect(readFileSync(path.join(shared, "out.txt"), "utf8")).toBe("written");
  });

  it("is gone at the next start once revoked", async () => {
    const seen = await inSandbox([], attempts({ list: `fs.readdirSync("/folders/documents")` }));
    expect(seen).toEqual({ list: "ENOENT" });
  });

  it("swapped for a link after it was chosen, is refused at the start, and nothing of it is opened", () => {
    const chosen = path.join(ownerHome, "Swapped");
    mkdirSync(chosen, { mode: 0o755 });
    const checked = checkGrantableFolder(chosen, "read", false, ctx);
    expect(checked.ok).toBe(true);
    renameSync(chosen, `${chosen}.old`);
    symlinkSync(sibling, chosen);
    const opened = openGrantedFolders([grant("documents", docs), grant("swapped", chosen)], ctx);
    expect(opened).toMatchObject({ ok: false, need: "swapped", code: "folder_grant_changed" });
    if (!opened.ok) expect(opened.reason).toContain("folder_path_link");
  });
});
