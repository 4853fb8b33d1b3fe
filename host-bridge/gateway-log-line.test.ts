import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openGatewayLog, rotatedLogPath } from "./gateway-log";
import { formatLogLine, logEntryOf, logLineAsText } from "./gateway-log-line";
import { readOwnerConfig } from "./owner-config";
import { readBackendLog } from "./supervisor/backend-log-tail";

const folders: string[] = [];
const folder = () => {
  const dir = mkdtempSync(join(tmpdir(), "pc-log-line-"));
  folders.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const at = new Date("2026-12-01T10:00:00.000Z");
const T = at.toISOString();

describe("a gateway.log line in each format", () => {
  it("text is the time and the line, as before", () => {
    expect(formatLogLine("text", at, "warning app notes backend (pid 1): slow")).toBe(
      `${T} warning app notes backend (pid 1): slow`,
    );
  });

  it("json names the level, the source and the message the line carries", () => {
    const json = (line: string) => JSON.parse(formatLogLine("json", at, line)) as unknown;
    expect(json("warning app notes backend (pid 1): slow: 3 s")).toEqual({
      time: T,
      level: "warning",
      source: "app notes backend (pid 1)",
      message: "slow: 3 s",
    });
    expect(json("bridge: removed 2 folders")).toEqual({
      time: T,
      level: "info",
      source: "bridge",
      message: "removed 2 folders",
    });
    expect(json("info notes:memory: started")).toMatchObject({
      level: "info",
      source: "notes:memory",
      message: "started",
    });
    expect(json("sel anchor: flushed")).toMatchObject({ source: "sel anchor", message: "flushed" });
    // A phrase before a colon is a message, not a source.
    expect(json("removed 3 staging files a killed write left behind: a, b")).toMatchObject({
      level: "info",
      source: "gateway",
      message: "removed 3 staging files a killed write left behind: a, b",
    });
    expect(json("error")).toMatchObject({ level: "info", source: "gateway", message: "error" });
  });

  it("json keeps an entry on one line whatever its message holds", () => {
    const line = formatLogLine("json", at, 'info bridge: two\nlines and a "quote" \u0007');
    expect(line).not.toContain("\n");
    expect((JSON.parse(line) as { message: string }).message).toBe('two\nlines and a "quote" \u0007');
  });

  it("a json entry reads back as the text line of the same entry", () => {
    for (const line of [
      "info app notes backend (pid 1): one",
      "error app notes backend exited with code 3",
      "warning bridge: app notes backend mentioned elsewhere",
    ])
      expect(logLineAsText(formatLogLine("json", at, line))).toBe(formatLogLine("text", at, line));
    expect(logLineAsText("{not json")).toBe("{not json");
    expect(logEntryOf(at, "debug x").level).toBe("debug");
  });
});

describe("gateway.log in json, rotated by a small bound", () => {
  it("keeps every line whole and parseable, loses none but the files past max_files, each file within its bound", () => {
    const dir = folder();
    const path = join(dir, "gateway.log");
    const limits = { maxBytes: 2048, kept: 3 };
    const log = openGatewayLog(path, () => undefined, Date.now, limits);
    const written: string[] = [];
    for (let i = 0; i < 400; i += 1) {
      // Lengths vary, and some lines carry multi-byte characters, so a bound falls anywhere in a line.
      const message = `line ${i} ${"é".repeat(i % 37)}${"x".repeat((i * 7) % 90)}`;
      written.push(message);
      log.write(formatLogLine("json", at, `info app notes backend (pid 1): ${message}`));
    }
    log.close();
    const files = [rotatedLogPath(path, 3), rotatedLogPath(path, 2), rotatedLogPath(path, 1), path];
    expect(readdirSync(dir).sort()).toEqual(["gateway.log", "gateway.log.1", "gateway.log.2", "gateway.log.3"]);
    const kept: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      expect(statSync(file).size).toBeLessThanOrEqual(limits.maxBytes);
      expect(text.endsWith("\n")).toBe(true);
      for (const line of text.split("\n").slice(0, -1)) kept.push((JSON.parse(line) as { message: string }).message);
    }
    // What is kept is the newest lines, in order, without a gap.
    expect(kept).toEqual(written.slice(written.length - kept.length));
    expect(kept.length).toBeGreaterThan(30);
  });

  it("an app's log tail reads json lines as it reads text ones", async () => {
    const path = join(folder(), "gateway.log");
    const lines = [
      "info app notes backend (pid 1): one",
      "info bridge: other",
      "warning app notes backend (pid 1): two",
    ];
    writeFileSync(path, lines.map((line) => `${formatLogLine("json", at, line)}\n`).join(""));
    expect((await readBackendLog(path, { name: "notes", lines: 10 })).lines).toEqual([
      `${T} info app notes backend (pid 1): one`,
      `${T} warning app notes backend (pid 1): two`,
    ]);
  });
});

describe("the owner's logs settings in config.json", () => {
  const configWith = (logs: object) => {
    const home = folder();
    writeFileSync(join(home, "config.json"), JSON.stringify({ logs }));
    return readOwnerConfig(home);
  };

  it("default to 10 MiB, 5 files and text", () => {
    const read = configWith({});
    expect(read.ok && read.config.logs).toEqual({
      security_retention_days: 365,
      max_size_mb: 10,
      max_files: 5,
      format: "text",
    });
  });

  it("take a size of at least 1 MiB, a count of kept files, and text or json", () => {
    const read = configWith({ max_size_mb: 1, max_files: 2, format: "json" });
    expect(read.ok && read.config.logs).toMatchObject({ max_size_mb: 1, max_files: 2, format: "json" });
    expect(configWith({ max_size_mb: 0 }).ok).toBe(false);
    expect(configWith({ max_files: 0 }).ok).toBe(false);
    expect(configWith({ format: "xml" }).ok).toBe(false);
  });
});
