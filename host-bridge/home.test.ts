// The runtime folder without $XDG_RUNTIME_DIR: a name nobody else can take first. Real
// folders in a temporary home and in the real /tmp; the suite runs as root, so a folder of
// another user is made with chown.
import {
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fitsSocketPaths, runtimeDir } from "./home";

const made: string[] = [];
afterEach(() => {
  for (const path of made.splice(0)) rmSync(path, { recursive: true, force: true });
});

function tempHome(suffix = ""): string {
  const root = mkdtempSync(join(tmpdir(), "pc-rt-"));
  made.push(root);
  const home = join(root, suffix || "home");
  mkdirSync(home, { recursive: true, mode: 0o700 });
  return home;
}

/** A home whose sockets would not fit in <home>/run/sockets. */
function longHome(): string {
  return tempHome("h".repeat(90));
}

function ownPrivateFolder(folder: string): void {
  const st = lstatSync(folder);
  expect(st.isDirectory()).toBe(true);
  expect(st.uid).toBe(process.getuid!());
  expect(st.mode & 0o777).toBe(0o700);
}

describe("runtimeDir without $XDG_RUNTIME_DIR", () => {
  it("is a private folder inside the home, whatever another user made at the old /tmp name", () => {
    const home = tempHome();
    // The name every earlier version used, made first by another user, and a link beside it.
    const tag = createHash("sha256").update(home).digest("hex").slice(0, 12);
    const squatted = join(tmpdir(), `personalclaw-${process.getuid!()}-${tag}`);
    mkdirSync(squatted, { mode: 0o777 });
    made.push(squatted);
    chownSync(squatted, 65534, 65534);
    const runtime = runtimeDir(home, undefined);
    expect(runtime).toBe(join(home, "run", "sockets"));
    ownPrivateFolder(runtime);
    ownPrivateFolder(join(runtime, "gateway"));
    // The same home finds the same folder (the gateway and `mcp run` meet there).
    expect(runtimeDir(home, "")).toBe(runtime);
  });

  it("a link or another user's folder at the home's name is never used: a random /tmp folder is", () => {
    const home = tempHome();
    const elsewhere = mkdtempSync(join(tmpdir(), "pc-rt-elsewhere-"));
    made.push(elsewhere);
    mkdirSync(join(home, "run"), { mode: 0o700 });
    symlinkSync(elsewhere, join(home, "run", "sockets"));
    const runtime = runtimeDir(home, undefined);
    made.push(runtime);
    expect(dirname(runtime)).toBe(tmpdir());
    expect(runtime).toMatch(new RegExp(`/personalclaw-${process.getuid!()}-[0-9a-f]{24}$`));
    ownPrivateFolder(runtime);
    expect(lstatSync(join(elsewhere)).isDirectory()).toBe(true);
    expect(() => lstatSync(join(elsewhere, "gateway"))).toThrow();

    const other = tempHome();
    mkdirSync(join(other, "run", "sockets"), { recursive: true, mode: 0o700 });
    chownSync(join(other, "run", "sockets"), 65534, 65534);
    const otherRuntime = runtimeDir(other, undefined);
    made.push(otherRuntime);
    expect(dirname(otherRuntime)).toBe(tmpdir());
    ownPrivateFolder(otherRuntime);
  });

  it("a home too long for its sockets gets a random /tmp name, recorded, and a new one when that is taken", () => {
    const home = longHome();
    expect(fitsSocketPaths(join(home, "run", "sockets"))).toBe(false);
    const first = runtimeDir(home, undefined);
    made.push(first);
    expect(dirname(first)).toBe(tmpdir());
    ownPrivateFolder(first);
    expect(readFileSync(join(home, "run", "runtime_folder"), "utf8").trim()).toBe(first);
    expect(runtimeDir(home, undefined)).toBe(first);

    // A /tmp cleaner removed it and another user took the name: a fresh name, and it is recorded.
    rmSync(first, { recursive: true });
    mkdirSync(first, { mode: 0o777 });
    chownSync(first, 65534, 65534);
    const second = runtimeDir(home, undefined);
    made.push(second);
    expect(second).not.toBe(first);
    ownPrivateFolder(second);
    expect(lstatSync(first).uid).toBe(65534);
    expect(readFileSync(join(home, "run", "runtime_folder"), "utf8").trim()).toBe(second);

    // A link at the recorded name, and a record naming a folder outside /tmp, are not followed.
    rmSync(second, { recursive: true });
    const target = mkdtempSync(join(tmpdir(), "pc-rt-target-"));
    made.push(target);
    symlinkSync(target, second);
    made.push(second);
    const third = runtimeDir(home, undefined);
    made.push(third);
    expect([first, second]).not.toContain(third);
    ownPrivateFolder(third);
    writeFileSync(join(home, "run", "runtime_folder"), `${target}\n`);
    const fourth = runtimeDir(home, undefined);
    made.push(fourth);
    expect(fourth).not.toBe(target);
    expect(() => lstatSync(join(target, "gateway"))).toThrow();
  });

  it("with $XDG_RUNTIME_DIR the folder is under it", () => {
    const home = tempHome();
    const xdg = mkdtempSync(join(tmpdir(), "pc-rt-xdg-"));
    made.push(xdg);
    const runtime = runtimeDir(home, xdg);
    expect(dirname(runtime)).toBe(xdg);
    ownPrivateFolder(runtime);
  });
});

describe("fitsSocketPaths", () => {
  it("a folder it accepts takes the longest socket the bridge makes there", async () => {
    const root = mkdtempSync(join(tmpdir(), "pc-rt-fit-"));
    made.push(root);
    // The longest folder it accepts: one more byte is refused.
    let folder = join(root, "f");
    while (fitsSocketPaths(`${folder}x`)) folder += "x";
    expect(fitsSocketPaths(folder)).toBe(true);
    mkdirSync(folder);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(join(folder, "egress-0123456789ab.sock"), resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  });
});
