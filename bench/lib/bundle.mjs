// A generated app bundle for the install figure: node-notes' manifest and files plus
// `files` generated files totalling `bytes`, half JavaScript-like text and half pseudo-random
// binary, in 100 folders. Deterministic (a fixed xorshift seed), so every run scans the same bytes.
import { cpSync, mkdirSync, writeFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { xorshift } from "./seeded-random.mjs";

const WORDS = [
  "note",
  "alpha",
  "render",
  "value",
  "index",
  "list",
  "item",
  "store",
  "fetch",
  "text",
  "count",
  "widget",
  "state",
  "route",
];

function textFile(size, rand) {
  const lines = [];
  let length = 0;
  for (let line = 0; length < size; line++) {
    const words = Array.from({ length: 6 }, () => WORDS[rand() % WORDS.length]);
    const text =
      line % 3 === 0
        ? `// ${words.join(" ")}\n`
        : `export const ${words[0]}${line} = ${JSON.stringify(words.slice(1).join(" "))};\n`;
    lines.push(text);
    length += text.length;
  }
  return Buffer.from(lines.join("")).subarray(0, size);
}

function binaryFile(size, rand) {
  const buf = Buffer.allocUnsafe(size);
  for (let i = 0; i + 4 <= size; i += 4) buf.writeUInt32LE(rand(), i);
  for (let i = size - (size % 4); i < size; i++) buf[i] = rand() & 0xff;
  return buf;
}

/** Writes the bundle into `dir` (which must not exist); answers {files, bytes} of the generated part. */
export function generateBundle(dir, { template, name, files, bytes }) {
  cpSync(template, dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(template, "app.json"), "utf8"));
  manifest.name = name;
  manifest.permissions.api = [`/api/apps/${name}/`];
  writeFileSync(join(dir, "app.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  const rand = xorshift(0x9e3779b9);
  const each = Math.floor(bytes / files);
  let written = 0;
  for (let i = 0; i < files; i++) {
    const folder = join(dir, "assets", `d${String(i % 100).padStart(2, "0")}`);
    if (i < 100) mkdirSync(folder, { recursive: true });
    const size = i === files - 1 ? bytes - written : each;
    const isText = i % 2 === 0;
    writeFileSync(
      join(folder, `f${String(i).padStart(5, "0")}.${isText ? "js" : "bin"}`),
      isText ? textFile(size, rand) : binaryFile(size, rand),
    );
    written += size;
  }
  return { files, bytes: written };
}
