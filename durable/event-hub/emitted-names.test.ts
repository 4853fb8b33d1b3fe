// WS-02: a build test that fails when code emits an event name the classification table lacks.
import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { EVENT_CLASSES } from "../../kernel/rules/event-names";

const root = fileURLToPath(new URL("../..", import.meta.url));

function sources(folder: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (/\.(ts|js|mjs)$/.test(name) && !/\.test\.ts$/.test(name)) out.push(path);
  }
  return out;
}

/** Every literal name handed to emitEvent(...) or put in a frame's `type` in the product's code. */
function emittedNames(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of [
    ...sources(join(root, "kernel")),
    ...sources(join(root, "workers")),
    ...sources(join(root, "durable")),
    ...sources(join(root, "host-bridge")),
  ]) {
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(/emitEvent\(\s*[\w.]+\s*,\s*"([^"]+)"/g)) found.set(match[1]!, file);
    for (const match of text.matchAll(/\{\s*type:\s*"([^"]+)"\s*,\s*data:/g)) found.set(match[1]!, file);
  }
  return found;
}

describe("every emitted event name is classified", () => {
  it("the product's code emits only names the classification table lists", () => {
    const names = emittedNames();
    expect(names.size).toBeGreaterThan(10);
    const unclassified = [...names].filter(([name]) => !Object.prototype.hasOwnProperty.call(EVENT_CLASSES, name));
    expect(unclassified).toEqual([]);
  });

  it("every name in the table is emitted somewhere (a listed name nothing sends is dead weight)", () => {
    const names = emittedNames();
    expect(Object.keys(EVENT_CLASSES).filter((name) => !names.has(name))).toEqual([]);
  });

  it("the scanner sees a name the table lacks", () => {
    const text = 'await emitEvent(req.env, "made.up", {});';
    const match = /emitEvent\(\s*[\w.]+\s*,\s*"([^"]+)"/.exec(text);
    expect(match?.[1]).toBe("made.up");
    expect(Object.prototype.hasOwnProperty.call(EVENT_CLASSES, "made.up")).toBe(false);
  });
});
