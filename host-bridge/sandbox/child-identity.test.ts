// The hand-over of a root gateway's writable folders to the child's user, with real files.
import { lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { handOverWritable } from "./child-identity";

const isRoot = process.getuid?.() === 0;
const root = mkdtempSync(path.join(tmpdir(), "pc-handover-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe.runIf(isRoot)("handOverWritable (as root)", () => {
  it("hands over every entry under data/ and never what a link in it names", () => {
    const outside = path.join(root, "outside");
    mkdirSync(outside);
    writeFileSync(path.join(outside, "secret"), "root's\n");
    const data = path.join(root, "app", "data");
    mkdirSync(path.join(data, "sub"), { recursive: true });
    writeFileSync(path.join(data, "sub", "rows.db"), "rows\n");
    // What an app's other child could plant: links to a folder and a file outside data/.
    symlinkSync(outside, path.join(data, "to-folder"));
    symlinkSync(path.join(outside, "secret"), path.join(data, "sub", "to-file"));
    handOverWritable([data], { uid: 65534, gid: 65534, name: "nobody", setpriv: "/usr/bin/setpriv" });
    for (const entry of [data, path.join(data, "sub"), path.join(data, "sub", "rows.db"), path.join(data, "to-folder")])
      expect(lstatSync(entry).uid, entry).toBe(65534);
    for (const entry of [outside, path.join(outside, "secret")]) expect(lstatSync(entry).uid, entry).toBe(0);
  });
});
