import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogRelay, levelOfLine } from "./log-relay.js";

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

describe("a stderr line's level", () => {
  it.each([
    ["INFO:     Uvicorn running on http://127.0.0.1:8000", "info"],
    ["WARNING:root:disk almost full", "warning"],
    ["2026-12-06 12:00:01,002 ERROR app: boom", "error"],
    ["[warn] retrying", "warning"],
    ["time=2026-12-06T12:00:00Z level=debug msg=tick", "debug"],
    ["error: the config file is missing", "error"],
    ["Traceback (most recent call last):", "error"],
    ["TypeError: x is not a function", "error"],
    ["Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'x'", "error"],
    // No level word: info, however it reads.
    ["no error found in 12 files", "info"],
    ["notes listening on 127.0.0.1:4000", "info"],
    ["GET /api/notes 200 3 ms", "info"],
  ])("%s reads as %s", (line, level) => {
    expect(levelOfLine(line)).toBe(level);
  });

  it("a relay attached 'from-line' tags each line at its own level, info when it names none", async () => {
    const got: Array<[string, string]> = [];
    const relay = createLogRelay({ tag: "app notes backend (pid 7)", sink: (l, s) => got.push([l, s]), secrets: [] });
    const err = new PassThrough();
    relay.attach(err, "from-line");
    err.end("listening\nWARNING: slow disk\nTraceback (most recent call last):\n");
    await relay.finished();
    expect(got.map(([level]) => level)).toEqual(["info", "warning", "error"]);
  });
});

describe("createLogRelay: cutting a long line", () => {
  it("never cuts a long line inside a secret: the value is masked whether it arrived whole or in two writes across the cut", async () => {
    const secret = "SuperSecretValue12345XYZ";
    for (const [first, second] of [
      // The value arrives whole, straddling the 8192nd character.
      ["hello world ".repeat(682) + "KEY=" + secret, " end\n"],
      // Its first characters are the last of one write, the rest come in the next.
      ["hello world ".repeat(682) + "KEY=" + secret.slice(0, 4), secret.slice(4) + " end\n"],
      // No space near the cut: one long word.
      ["x".repeat(8188) + secret.slice(0, 6), secret.slice(6) + "\n"],
    ]) {
      const got: string[] = [];
      const relay = createLogRelay({ tag: "t", sink: (_l, line) => got.push(line), secrets: [secret] });
      const out = new PassThrough();
      relay.attach(out, "info");
      out.write(first);
      await new Promise((r) => setImmediate(r));
      out.end(second);
      await relay.finished();
      expect(got.length).toBeGreaterThanOrEqual(1);
      expect(got.every((line) => line.length <= 8192 + 80)).toBe(true);
      for (let i = 0; i + 4 <= secret.length; i++)
        for (const line of [...got, ...relay.lastLines()])
          expect(line, secret.slice(i, i + 4)).not.toContain(secret.slice(i, i + 4));
      expect(got.join("")).toContain("***");
    }
  });

  it("cuts a long line with no space next to a token only where no credential shape runs: the token is masked whole", async () => {
    const token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    const bearer = "0a1b2c3d4e5f6a7b";
    for (const line of [
      // JSON output, no space anywhere: the token straddles the 8192nd character.
      `{"pad":"${"x".repeat(8170)}","token":"${token}","more":"${"y".repeat(50)}"}`,
      // An Authorization header whose token (no shape of its own) straddles the cut.
      `${"z".repeat(8160)} Authorization: Bearer ${bearer} done`,
    ]) {
      const got: string[] = [];
      const relay = createLogRelay({ tag: "t", sink: (_l, text) => got.push(text), secrets: [] });
      const out = new PassThrough();
      relay.attach(out, "info");
      // Written before its newline comes, the line is cut as it arrives.
      out.write(line);
      await new Promise((r) => setImmediate(r));
      out.end("\n");
      await relay.finished();
      expect(got.length).toBeGreaterThanOrEqual(2);
      const all = got.join("\n");
      for (let i = 0; i + 6 <= token.length - 4; i++) expect(all).not.toContain(token.slice(4 + i, 4 + i + 6));
      for (let i = 0; i + 6 <= bearer.length; i++) expect(all).not.toContain(bearer.slice(i, i + 6));
      expect(all).toContain("***");
    }
  });

  it("masks a word cut because no break is near on both sides of the cut: a token in a URL-encoded query leaves no half", async () => {
    const token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    const prefix = ("GET /cb?state=" + "ab%2Fcd%3D".repeat(1000)).slice(0, 8192 - "&access_token=".length - 12);
    const line = `${prefix}&access_token=${token}&next=%2Fhome`;
    for (const long of [line, `${"q".repeat(9000)}&access_token=${token}&more=${"r".repeat(9000)}`]) {
      const got: string[] = [];
      const relay = createLogRelay({ tag: "t", sink: (_l, text) => got.push(text), secrets: [] });
      const out = new PassThrough();
      relay.attach(out, "info");
      // Streamed as a logger writes a long line: past the limit, then the rest with its newline.
      out.write(long.slice(0, 8300));
      await new Promise((r) => setImmediate(r));
      out.end(long.slice(8300) + "\n");
      await relay.finished();
      const all = got.join("\n");
      expect(got.length).toBeGreaterThanOrEqual(2);
      for (let i = 4; i + 6 <= token.length; i++) expect(all).not.toContain(token.slice(i, i + 6));
      expect(all).toContain("***");
      expect(got.every((text) => text.length <= 8192 + 80)).toBe(true);
    }
  });
});

describe("createLogRelay: no part of a credential at a cut", () => {
  it("leaves no 6 characters of a credential at any cut: Bearer's space, a password holding ';', a value after '=', a key's header", async () => {
    const { generateKeyPairSync } = await import("node:crypto");
    const token = "Zq8xR2mN5pL7vT1wK4yH9c"; // an opaque Bearer token: no shape of its own
    const password = "hunter2;SuperSecretPassword";
    const phrase = "correct horse battery staple";
    const pem = generateKeyPairSync("ec", { namedCurve: "P-256" })
      .privateKey.export({ type: "sec1", format: "pem" })
      .toString();
    const json = JSON.stringify({ private_key: pem });
    const head = "Authorization: Bearer" + " ".repeat(12);
    const handed = "Xy7,correct horse battery";
    const scpWord = "notify=ops@example.com;remote=deploy:Tr0ub4dor&3,horse@git.example.com:repo.git";
    const cases: Array<{ line: string; hidden: string[]; secrets?: string[]; splitAt?: string }> = [
      // A URL login whose '@' has not come when the cut is made.
      {
        line: "w ".repeat(4081) + " https://deploy:Tr0ub4dor,horse@git.example.com/repo.git after",
        hidden: ["Tr0ub4dor,horse"],
        splitAt: "@",
      },
      // An scp login in a word with an '@' before its first ':', cut near a ',' in its password.
      {
        line: "y ".repeat(4000) + "z".repeat(192 - scpWord.indexOf(",") - 5) + scpWord + "Q".repeat(50),
        hidden: ["Tr0ub4dor&3,horse"],
      },
      // Bearer and over a thousand spaces, its token across the cut.
      {
        line:
          ("x ".repeat(3540) + "Authorization: Bearer" + " ".repeat(1100)).slice(0, 8180) + "opaqueTOKENvalue7f3a tail",
        hidden: ["opaqueTOKENvalue7f3a"],
      },
      // A handed-over value at the start that the first cut cannot stay clear of, and another across the limit.
      { line: handed + "Q".repeat(8190 - handed.length) + handed + " end", hidden: [handed], secrets: [handed] },
      // The cut falls just before the space after `Bearer`, the token in the next piece.
      { line: "a".repeat(8185) + "=Bearer " + token + " end", hidden: [token] },
      // Bearer and a long run of spaces, the cut between them and the token.
      { line: "x ".repeat(4096).slice(0, 8185 - head.length) + head + token, hidden: [token] },
      // A URL login whose password holds ';' (allowed raw there), across the cut.
      { line: "x ".repeat(4080) + `clone https://deploy:${password}@git.example.com/repo.git`, hidden: [password] },
      // A handed-over value that begins inside a word at the cut.
      { line: "a".repeat(8180) + "pass=" + phrase + " end", hidden: [phrase], secrets: [phrase] },
      // A private key in one JSON line, the cut inside its BEGIN header.
      {
        line: "x ".repeat(4096).slice(0, 8192 - json.indexOf("PRIVATE") - 2) + json,
        hidden: pem.split("\n").filter((l) => l !== "" && !l.startsWith("-----")),
      },
    ];
    for (const { line, hidden, secrets = [], splitAt } of cases) {
      for (const newlineApart of [true, false]) {
        const got: string[] = [];
        const relay = createLogRelay({ tag: "t", sink: (_l, text) => got.push(text), secrets });
        const out = new PassThrough();
        relay.attach(out, "info");
        // The line and its newline in one write, or the newline after: a long line is cut either way.
        if (splitAt !== undefined) {
          out.write(line.slice(0, line.indexOf(splitAt)));
          await new Promise((r) => setImmediate(r));
          out.end(line.slice(line.indexOf(splitAt)) + "\n");
        } else if (newlineApart) {
          out.write(line);
          await new Promise((r) => setImmediate(r));
          out.end("\n");
        } else out.end(line + "\n");
        await relay.finished();
        expect(got.length, line.slice(-60)).toBeGreaterThanOrEqual(2);
        expect(got.every((text) => text.length <= 8192 + 80)).toBe(true);
        const all = [...got, ...relay.lastLines()].join("\n");
        for (const value of hidden)
          for (let i = 0; i + 6 <= value.length; i++) expect(all, line.slice(-60)).not.toContain(value.slice(i, i + 6));
      }
    }
  });

  it("masks two handed-over values that share characters without leaving the tail of either", async () => {
    const got: string[] = [];
    const relay = createLogRelay({
      tag: "t",
      sink: (_l, text) => got.push(text),
      secrets: ["hunter2-password-99", "99-followed-by-more"],
    });
    const out = new PassThrough();
    relay.attach(out, "info");
    out.end("joined: hunter2-password-99-followed-by-more, alone: 99-followed-by-more\n");
    await relay.finished();
    expect(got).toEqual(["t: joined: ***, alone: ***"]);
  });
});

describe("createLogRelay: secrets of several lines", () => {
  it("masks each line of a secret of several lines: the relay masks line by line, where the whole value never appears", async () => {
    const secret = "first-half-of-cred-XyZ\nsecond-half-of-cred-AbC\r\n}";
    const got: string[] = [];
    const relay = createLogRelay({ tag: "t", sink: (_l, line) => got.push(line), secrets: [secret] });
    const out = new PassThrough();
    relay.attach(out, "info");
    out.end(`env: ${secret}\nbye }\n`);
    await relay.finished();
    for (const line of [...got, ...relay.lastLines()]) {
      expect(line).not.toContain("first-half-of-cred-XyZ");
      expect(line).not.toContain("second-half-of-cred-AbC");
    }
    expect(got.join("\n")).toContain("***");
    // A line of it too short to be a secret on its own ("}") is left alone elsewhere.
    expect(got.join("\n")).toContain("bye }");
  });

  it("emits and keeps every line masked and escaped, a private key printed across lines included", async () => {
    const got: string[] = [];
    const relay = createLogRelay({ tag: "app x hook", sink: (_l, s) => got.push(s), secrets: ["handed-over-value"] });
    const out = new PassThrough();
    relay.attach(out, "info");
    out.end(
      [
        "\u001b[2KBackend process: none\rInstall hook: none",
        "value handed-over-value and AKIAIOSFODNN7EXAMPLE",
        "-----BEGIN RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEAx4fGh",
        "-----END RSA PRIVATE KEY-----",
        "abc\u202edef",
      ].join("\n") + "\n",
    );
    await relay.finished();
    const expected = [
      "\\x1b[2KBackend process: none\\rInstall hook: none",
      "value *** and ***",
      "***",
      "***",
      "***",
      "abc\\u202edef",
    ];
    expect(got).toEqual(expected.map((line) => `app x hook: ${line}`));
    expect(relay.lastLines()).toEqual(expected);
  });
});
