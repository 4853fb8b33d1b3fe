// The one reader of the bridge's own records refuses what a planted or torn file could be:
// a link, a socket, a folder, an oversized file, JSON with a duplicate key, a record of another shape.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { readPrivateRecord, readPrivateRecordFile } from "./private-record";

const Record = z.strictObject({ name: z.string(), step: z.number() });
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pc-record-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("reading a private record", () => {
  it("reads a valid record, and says none for a missing file or folder", () => {
    writeFileSync(join(dir, "ok.json"), '{"name":"notes","step":2}\n');
    expect(readPrivateRecordFile(join(dir, "ok.json"), Record)).toEqual({
      found: "record",
      value: { name: "notes", step: 2 },
    });
    expect(readPrivateRecordFile(join(dir, "absent.json"), Record)).toEqual({ found: "none" });
    expect(readPrivateRecordFile(join(dir, "absent", "x.json"), Record)).toEqual({ found: "none" });
  });

  it("never follows a link, even to a valid record", () => {
    writeFileSync(join(dir, "real.json"), '{"name":"notes","step":2}\n');
    symlinkSync(join(dir, "real.json"), join(dir, "link.json"));
    expect(readPrivateRecordFile(join(dir, "link.json"), Record)).toEqual({
      found: "unreadable",
      reason: "it is a link",
    });
  });

  it("refuses a socket planted at the record's name, and a folder", async () => {
    const server = createServer();
    await new Promise<void>((listening) => server.listen(join(dir, "socket.json"), listening));
    try {
      expect(readPrivateRecordFile(join(dir, "socket.json"), Record).found).toBe("unreadable");
    } finally {
      server.close();
    }
    mkdirSync(join(dir, "folder.json"));
    expect(readPrivateRecordFile(join(dir, "folder.json"), Record).found).toBe("unreadable");
  });

  it("refuses a file over the cap, JSON with a duplicate key, text that is not JSON and a record of another shape", () => {
    writeFileSync(join(dir, "big.json"), JSON.stringify({ name: "x".repeat(200), step: 1 }));
    expect(readPrivateRecordFile(join(dir, "big.json"), Record, 100)).toMatchObject({ found: "unreadable" });
    writeFileSync(join(dir, "dup.json"), '{"name":"notes","step":2,"step":3}');
    expect(readPrivateRecordFile(join(dir, "dup.json"), Record)).toEqual({
      found: "unreadable",
      reason: "it is not strict JSON",
    });
    writeFileSync(join(dir, "torn.json"), '{"name":"no');
    expect(readPrivateRecord(join(dir, "torn.json"), Record)).toBeNull();
    writeFileSync(join(dir, "shape.json"), '{"name":"notes","step":"2"}');
    expect(readPrivateRecordFile(join(dir, "shape.json"), Record)).toEqual({
      found: "unreadable",
      reason: "it is not a valid record",
    });
  });
});
