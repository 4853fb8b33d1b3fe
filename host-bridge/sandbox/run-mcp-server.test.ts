// What `mcp run` keeps of a server's stderr for its start report: never a secret's piece.
import { describe, expect, it } from "vitest";
import { stderrLines } from "./run-mcp-server";

describe("stderrLines", () => {
  it("masks a secret that straddles the 8 KiB cut of a line that has not ended yet, and one split across writes", () => {
    const secret = "SuperSecretValue12345XYZ";
    // A long unended line whose secret sits across the point the kept tail starts from.
    let read = stderrLines("", "x".repeat(100) + secret + "y".repeat(8192 - 10), [secret]);
    expect(read.partial).not.toContain(secret.slice(-8));
    read = stderrLines(read.partial, " end\n", [secret]);
    expect(read.lines.join("")).not.toContain(secret.slice(-8));
    // The secret's first half ends one write, the rest starts the next.
    read = stderrLines("", "key=" + secret.slice(0, 10), [secret]);
    read = stderrLines(read.partial, secret.slice(10) + "\n", [secret]);
    expect(read.lines).toEqual(["key=***"]);
  });
});
