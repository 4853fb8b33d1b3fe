import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogRelay, escapeControls, maskLine } from "./log-relay.js";

describe("maskLine", () => {
  it("masks a credential by its value wherever it appears", () => {
    const secret = "a1b2c3d4e5f6g7h8";
    expect(maskLine(`secret=${secret}; again:${secret}`, [secret])).toBe("secret=***; again:***");
  });

  it("masks Bearer tokens, URL logins, sk- keys, id.secret tokens and long hex keys by shape", () => {
    expect(maskLine("Authorization: Bearer abc.def-123", [])).toBe("Authorization: Bearer ***");
    expect(maskLine("GET https://ada:hunter2@example.com/x", [])).toBe("GET https://***@example.com/x");
    expect(maskLine("key sk-proj-ABCdef1234567890xyz end", [])).toBe("key *** end");
    expect(maskLine("token Xy12abCD.Q9w8e7r6t5y4u3i2o1pAsDf done", [])).toBe("token *** done");
    expect(maskLine(`hex ${"ab".repeat(32)}`, [])).toBe("hex ***");
  });

  it("leaves ordinary text, paths and host names alone", () => {
    const line = "listening on http://127.0.0.1:4321 from /work/main/test/fixtures/backends/healthy.mjs at www.example.com";
    expect(maskLine(line, [])).toBe(line);
  });
});

describe("escapeControls", () => {
  it("writes an ANSI escape and a bell as visible escapes", () => {
    expect(escapeControls("\u001b[31mred\u001b[0m\u0007")).toBe("\\x1b[31mred\\x1b[0m\\x07");
  });

  it("writes bidirectional overrides as visible escapes", () => {
    expect(escapeControls("abc\u202edef")).toBe("abc\\u202edef");
  });
});

describe("createLogRelay", () => {
  it("relays stdout at info and stderr at warning, tagged, line by line", async () => {
    const got: Array<[string, string]> = [];
    const relay = createLogRelay({ tag: "app notes backend (pid 7)", sink: (l, s) => got.push([l, s]), secrets: [] });
    const out = new PassThrough();
    const err = new PassThrough();
    relay.attach(out, "info");
    relay.attach(err, "warning");
    out.write("one\r\ntw");
    out.end("o\n");
    err.end("oops");
    await relay.finished();
    expect(got).toContainEqual(["info", "app notes backend (pid 7): one"]);
    expect(got).toContainEqual(["info", "app notes backend (pid 7): two"]);
    expect(got).toContainEqual(["warning", "app notes backend (pid 7): oops"]);
  });

  it("takes a burst of 200 lines then 2 a second and counts the rest in a note", async () => {
    let t = 0;
    const got: string[] = [];
    const relay = createLogRelay({ tag: "t", sink: (_l, s) => got.push(s), secrets: [], now: () => t });
    const out = new PassThrough();
    relay.attach(out, "info");
    for (let i = 0; i < 1000; i++) out.write(`l${i}\n`);
    await new Promise((r) => setImmediate(r));
    expect(got).toHaveLength(200);
    t += 1000; // one second later: two more lines are taken, the drop note comes first
    out.write("late1\nlate2\nlate3\n");
    await new Promise((r) => setImmediate(r));
    expect(got[200]).toBe("t: 800 line(s) dropped by the log rate limit (200 burst, then 2/s)");
    expect(got.slice(201)).toEqual(["t: late1", "t: late2"]);
    out.end();
    await relay.finished();
    expect(got.at(-1)).toContain("1 line(s) dropped");
    expect(relay.dropped()).toBe(801);
  });

  it("keeps the last 40 lines masked, dropped ones included", async () => {
    const relay = createLogRelay({ tag: "t", sink: () => {}, secrets: ["supersecretvalue"], burst: 5, now: () => 0 });
    const out = new PassThrough();
    relay.attach(out, "info");
    for (let i = 0; i < 100; i++) out.write(`line ${i} supersecretvalue\n`);
    out.end();
    await relay.finished();
    const last = relay.lastLines();
    expect(last).toHaveLength(40);
    expect(last[0]).toBe("line 60 ***");
    expect(last[39]).toBe("line 99 ***");
  });

  it("cuts a line that never ends so memory stays bounded", async () => {
    const got: string[] = [];
    const relay = createLogRelay({ tag: "t", sink: (_l, s) => got.push(s), secrets: [], maxLineChars: 100 });
    const out = new PassThrough();
    relay.attach(out, "info");
    out.end("x".repeat(250));
    await relay.finished();
    expect(got).toHaveLength(3);
    expect(got[0]).toContain("[line cut at 100 characters]");
  });
});
