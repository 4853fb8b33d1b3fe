import { describe, expect, it } from "vitest";
import {
  createLineMasker,
  escapeControls,
  MASK,
  maskCredentials,
  maskCredentialShapes,
  maskExactValues,
  safeHtmlText,
  safeLine,
  safeLines,
} from "./text-safety";

function hex(code: number): string {
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("escapeControls", () => {
  const NAMED: Record<number, string> = { 0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t" };
  const classes: Array<[string, number[]]> = [
    ["C0 controls", range(0x00, 0x1f)],
    ["DEL", [0x7f]],
    ["C1 controls", range(0x80, 0x9f)],
    ["bidi embeddings and overrides", range(0x202a, 0x202e)],
    ["bidi isolates", range(0x2066, 0x2069)],
    ["bidi marks", [0x200e, 0x200f, 0x061c]],
    ["zero-width and joiner characters", [0x200b, 0x200c, 0x200d, 0x2060, 0xfeff]],
    ["invisible operators and deprecated format characters", [...range(0x2061, 0x2064), ...range(0x206a, 0x206f)]],
    ["soft hyphen, Mongolian vowel separator, grapheme joiner", [0x00ad, 0x180e, 0x034f]],
    ["line and paragraph separators", [0x2028, 0x2029]],
    ["Hangul fillers", [0x115f, 0x1160, 0x3164, 0xffa0]],
    ["interlinear annotation", range(0xfff9, 0xfffb)],
  ];
  for (const [name, codes] of classes) {
    it(`writes every one of the ${name} as a visible escape`, () => {
      for (const code of codes) {
        const ch = String.fromCodePoint(code);
        const expected = NAMED[code] ?? hex(code);
        expect(escapeControls(`a${ch}b`), `U+${code.toString(16)}`).toBe(`a${expected}b`);
      }
    });
  }

  it("writes tag characters and lone surrogates as visible escapes", () => {
    expect(escapeControls("x\u{e0041}\u{e007f}y")).toBe("x\\u{e0041}\\u{e007f}y");
    expect(escapeControls("x\ud800y\udc00")).toBe("x\\ud800y\\udc00");
  });

  it("writes ANSI sequences as visible text", () => {
    expect(escapeControls("\u001b[31mred\u001b[0m\u0007 \u001b[2K\u009b2K \u001b]0;title\u0007")).toBe(
      "\\x1b[31mred\\x1b[0m\\x07 \\x1b[2K\\x9b2K \\x1b]0;title\\x07",
    );
  });

  it("keeps printable text, accents, other scripts and emoji as they are", () => {
    const text = "Café — naïve 東京 مرحبا 🙂 ~!@#$%^&*()_+ \\x1b";
    expect(escapeControls(text)).toBe(text);
  });

  it("makes one line by default, and keeps newlines and tabs but never CR with keepLines", () => {
    expect(escapeControls("a\nb\tc\rd")).toBe("a\\nb\\tc\\rd");
    expect(escapeControls("a\nb\tc\rd", { keepLines: true })).toBe("a\nb\tc\\rd");
  });

  it("changes nothing when applied twice", () => {
    const once = escapeControls("\u001b[2K\u202e\r\n");
    expect(escapeControls(once)).toBe(once);
  });
});

describe("maskCredentialShapes", () => {
  const cases: Array<[string, string, string]> = [
    ["an AWS access key id", "aws AKIAIOSFODNN7EXAMPLE ok", `aws ${MASK} ok`],
    // Kept as masked when the patterns were made linear on crafted runs.
    ["a URL login after a digit", "1https://deploy:hunter2pass@example.com/x", `1https://${MASK}@example.com/x`],
    [
      "an scp login with a long password",
      "deploy:" + "correct-horse-battery-staple!".repeat(10) + "@git.example.com:repo.git",
      `${MASK}@git.example.com:repo.git`,
    ],
    [
      "an scp login with a long user",
      "u".repeat(70) + ":hunter2pass@git.example.com:r.git",
      `${MASK}@git.example.com:r.git`,
    ],
    ["an rk_ key of many groups", "k rk_a_b_c_d_e_f_g_h_i_abcdefghijklmnop end", `k ${MASK} end`],
    ["an sk_ key with a long group", "sk_" + "a1b2c3".repeat(12) + "_" + "x".repeat(20), MASK],
    ["an AWS temporary key id", "ASIAIOSFODNN7EXAMPLE", MASK],
    ["a Bearer value", "Authorization: Bearer abc.DEF-123_xyz", `Authorization: Bearer ${MASK}`],
    ["a Basic value", "Authorization: Basic YWRhOmh1bnRlcjI=", `Authorization: Basic ${MASK}`],
    ["an id.secret session token", "t=AbCdEfGhIjKlMnOp.QrStUvWxYz0123456789ab end", `t=${MASK} end`],
    ["an id.secret token ending a sentence", "token AbCdEfGhIjKlMnOp.QrStUvWxYz0123456789ab.", `token ${MASK}.`],
    ["an id.secret token after a colon", "id:AbCdEfGhIjKlMnOp.QrStUvWxYz0123456789ab", `id:${MASK}`],
    ["a short-id token with a random secret", "token Xy12abCD.Q9w8e7r6t5y4u3i2o1pAsDf done", `token ${MASK} done`],
    ["32+ hex characters", `key ${"a1".repeat(16)} here`, `key ${MASK} here`],
    ["an sk- key", "use sk-proj-abcdefgh12345", `use ${MASK}`],
    ["an sk_live_ key", "sk_live_ABCdef1234567890xyz", MASK],
    ["a GitHub token", "ghp_0123456789abcdefABCDEF", MASK],
    ["a GitHub fine-grained token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", MASK],
    ["a Slack token", "xoxb-1234-5678-abcdefgh", MASK],
    ["a Slack app token", "xapp-1-A0123-456789-abcdef", MASK],
    [
      "an npm token",
      `//registry.npmjs.org/:_authToken=npm_${"aB3".repeat(12)}`,
      `//registry.npmjs.org/:_authToken=${MASK}`,
    ],
    ["a JWT", "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig-part_1 x", `jwt ${MASK} x`],
    ["a long random base64 key", `k ${"Ab3dEf9h".repeat(6)} k`, `k ${MASK} k`],
    ["a URL login", "fetch https://ada:hunter2@example.com/x", `fetch https://${MASK}@example.com/x`],
    ["a URL password holding @", "https://ada:p@ss@host.test/x", `https://${MASK}@host.test/x`],
    ["a URL password holding /", "https://ada:p/ss@host.test/x", `https://${MASK}@host.test/x`],
    ["a token as URL user", "https://ghtoken@github.com/o/r.git", `https://${MASK}@github.com/o/r.git`],
    ["an scp-style login", "git clone ada:pw@host.test:repo.git", `git clone ${MASK}@host.test:repo.git`],
    [
      "a private key block",
      "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----\nafter",
      `key:\n${MASK}\nafter`,
    ],
    ["an unterminated private key block", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg", MASK],
  ];
  it.each(cases)("masks %s", (_name, text, expected) => {
    expect(maskCredentialShapes(text)).toBe(expected);
  });

  it.each([
    "app weather installed",
    "GET /api/apps/weather/config",
    "https://example.com/path/@me?q=a@b",
    "listening on http://127.0.0.1:4321 from /work/main/test/fixtures/backends/healthy.mjs at www.example.com",
    "digest 0123456789abcdef0123456789abcde",
    "session_signed_in via link",
    "Bearer of news",
    `consent sha256:${"ab".repeat(32)}`,
    // Wheel file names as pip prints them: a token's two parts inside a longer dotted name are not a token.
    "Downloading pydantic_core-2.46.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl (2.0 MB)",
    "Collecting charset_normalizer-3.4.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    "Using cached MarkupSafe-3.0.2-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    "tokenizers-0.21.0-cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    "numpy-2.1.3-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
  ])("leaves '%s' as it is", (text) => {
    expect(maskCredentialShapes(text)).toBe(text);
  });

  it("still masks the hex of a consent digest when it is not labelled sha256:", () => {
    expect(maskCredentialShapes(`key ${"ab".repeat(32)}`)).toBe(`key ${MASK}`);
  });
});

describe("masking by value", () => {
  it("masks each value wherever it appears, inside longer words too", () => {
    expect(maskExactValues("a=plain-words; b=xplain-wordsx", ["plain-words"])).toBe(`a=${MASK}; b=x${MASK}x`);
  });

  it("masks the longer of two overlapping values whole", () => {
    expect(maskExactValues("abcdefgh", ["abcd", "abcdefgh"])).toBe(MASK);
  });

  it("ignores empty and very short values, which would shred the text", () => {
    expect(maskExactValues("a b c", ["", "a", "abc"])).toBe("a b c");
  });

  it("applies before shapes, so a value that is also a shape leaves no tail", () => {
    expect(maskCredentials("x AKIAIOSFODNN7EXAMPLEtail", ["AKIAIOSFODNN7EXAMPLEtail"])).toBe(`x ${MASK}`);
  });
});

describe("safeLine and safeLines", () => {
  const hostile = "Backend process: node x.js\r\u001b[2KBackend process: none\u202e\nInstall hook: none";

  it("safeLine masks, then escapes everything into one line", () => {
    expect(safeLine(`${hostile} Bearer abcdefgh`, ["node x.js"])).toBe(
      `Backend process: ${MASK}\\r\\x1b[2KBackend process: none\\u202e\\nInstall hook: none Bearer ${MASK}`,
    );
  });

  it("safeLines keeps each line but escapes CR, ANSI and bidi inside it", () => {
    expect(safeLines(hostile)).toBe(
      "Backend process: node x.js\\r\\x1b[2KBackend process: none\\u202e\nInstall hook: none",
    );
    expect(safeLines("one\r\ntwo\n")).toBe("one\ntwo\n");
  });

  it("safeLines masks a private key block across lines and what follows it stays", () => {
    const text = "before\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB\nabc\n-----END EC PRIVATE KEY----- tail\nafter";
    expect(safeLines(text)).toBe(`before\n${MASK}\n${MASK}\n${MASK}\n${MASK} tail\nafter`);
  });

  it("a line masker remembers an open key block from one line to the next", () => {
    const mask = createLineMasker([]);
    expect(["x -----BEGIN RSA PRIVATE KEY-----", "MIIB", "-----END RSA PRIVATE KEY-----", "done"].map(mask)).toEqual([
      `x ${MASK}`,
      MASK,
      MASK,
      "done",
    ]);
  });
});

describe("safeHtmlText", () => {
  it("writes markup characters as entities, so a name with <script> stays text in a page", () => {
    expect(safeHtmlText(`<script>alert("x")</script> & 'y'`)).toBe(
      "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;",
    );
  });

  it("escapes bidi overrides and ANSI sequences visibly and masks a credential before it reaches the page", () => {
    expect(safeHtmlText("app\u202eevil\x1b[31m")).toBe("app\\u202eevil\\x1b[31m");
    expect(safeHtmlText("Bearer abcdefghijklmnop")).toBe(`Bearer ${MASK}`);
  });
});
