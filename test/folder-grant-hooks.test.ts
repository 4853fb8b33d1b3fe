// Folder grants and an app's hooks, on the real stack (issue 37: "never hooks or installers unless
// the need says so"): real workerd, the real bridge, real bubblewrap. An app's install and
// uninstall hooks see none of its granted folders unless the need declares `"hooks": true`; then
// exactly that need's folder, at /folders/<need>, and never another need's. Declaring it is a
// change of what the owner consented to: the review says so and the update asks again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gatewayPerSuite, runCli } from "./helpers/gateway";

const APP = "hook-folders";

/** What the hook writes to data/: what it saw at each need's place, and the variables naming them. */
const HOOK = `import { readdirSync, writeFileSync, appendFileSync } from "node:fs";
const seen = {};
for (const need of ["documents", "outbox"]) {
  try {
    seen[need] = readdirSync("/folders/" + need).sort();
  } catch (error) {
    seen[need] = error.code;
  }
}
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("PERSONALCLAW_FOLDER_")));
const which = process.argv[2];
if (which === "install") writeFileSync("data/hook-saw-" + process.env.APP_VERSION + ".json", JSON.stringify({ seen, env }));
// The uninstall hook leaves a note where it can: in the owner's folder, if it was given it.
else try { appendFileSync("/folders/documents/uninstall-hook.txt", "was here\\n"); } catch {}
`;

let root: string;
let documents: string;
let outbox: string;

/** Writes the app's folder for `version`; `hooks` says whether the documents need is shared with its hooks. */
function appFolder(version: string, hooks: boolean): string {
  const folder = join(root, `app-${version}`);
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, "app.json"),
    JSON.stringify({
      name: APP,
      version,
      description: "Test fixture: its hooks report which granted folders they see.",
      setup: {
        onInstall: { command: "node", args: ["hook.mjs", "install"] },
        onUninstall: { command: "node", args: ["hook.mjs", "uninstall"] },
      },
      permissions: {
        storage: true,
        network: false,
        folders: [
          { name: "documents", why: "its hooks index your notes", access: "read-write", ...(hooks ? { hooks } : {}) },
          { name: "outbox", why: "the backend writes reports", access: "read-write" },
        ],
      },
    }),
  );
  writeFileSync(join(folder, "hook.mjs"), HOOK.replace("process.env.APP_VERSION", JSON.stringify(version)));
  return folder;
}

beforeAll(() => {
  root = mkdtempSync(join("/var/tmp", "pc-hook-folders-"));
  documents = join(root, "Documents");
  outbox = join(root, "Outbox");
  for (const folder of [documents, outbox]) mkdirSync(folder);
  writeFileSync(join(documents, "notes.txt"), "notes");
  writeFileSync(join(outbox, "report.txt"), "report");
  // A root gateway's children run as nobody: the owner opens the folders to it.
  chmodSync(root, 0o755);
  chmodSync(documents, 0o777);
  chmodSync(outbox, 0o777);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("granted folders and an app's hooks", () => {
  const gw = gatewayPerSuite();
  const cli = (args: string[]) => runCli([...args, "--home", gw.home], {}, 120_000);
  const saw = (version: string) =>
    JSON.parse(readFileSync(join(gw.home, "apps", APP, "data", `hook-saw-${version}.json`), "utf8")) as {
      seen: Record<string, unknown>;
      env: Record<string, string>;
    };

  it("a need without `hooks` keeps its granted folder out of an update's install hook", async () => {
    const installed = await cli(["apps", "install", appFolder("1.0.0", false), "--yes", "--json"]);
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
    for (const [need, path] of [
      ["documents", documents],
      ["outbox", outbox],
    ] as const) {
      const set = await cli(["apps", "folders", APP, "set", need, path, "--read-write", "--json"]);
      expect(set.code, set.stdout + set.stderr).toBe(0);
    }
    const updated = await cli(["apps", "update", APP, appFolder("1.1.0", false), "--yes", "--json"]);
    expect(updated.code, updated.stdout + updated.stderr).toBe(0);
    expect(saw("1.1.0")).toEqual({ seen: { documents: "ENOENT", outbox: "ENOENT" }, env: {} });
  });

  it("declaring `hooks: true` is shown in the review and asks consent again", async () => {
    const shown = await cli(["apps", "update", APP, appFolder("1.2.0", true)]);
    expect(shown.code).toBe(1);
    expect(shown.stderr).toContain("documents (read-write, its hooks too): its hooks index your notes");
    expect(shown.stderr).toContain("consent_required");
    expect(existsSync(join(gw.home, "apps", APP, "data", "hook-saw-1.2.0.json"))).toBe(false);
  });

  it("consented, the install hook sees that need's folder at /folders/<need>, and no other need's", async () => {
    const updated = await cli(["apps", "update", APP, appFolder("1.2.0", true), "--yes", "--json"]);
    expect(updated.code, updated.stdout + updated.stderr).toBe(0);
    expect(saw("1.2.0")).toEqual({
      seen: { documents: ["notes.txt"], outbox: "ENOENT" },
      env: { PERSONALCLAW_FOLDER_DOCUMENTS: "/folders/documents" },
    });
  });

  it("the uninstall hook of such a need works in that granted folder and in no other", async () => {
    const removed = await cli(["apps", "uninstall", APP, "--json"]);
    expect(removed.code, removed.stdout + removed.stderr).toBe(0);
    expect(readFileSync(join(documents, "uninstall-hook.txt"), "utf8")).toBe("was here\n");
    expect(existsSync(join(outbox, "uninstall-hook.txt"))).toBe(false);
  });
});
