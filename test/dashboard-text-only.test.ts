// The dashboard sets app data as text, never as HTML: no file under web/ uses a sink that
// parses markup, so a hostile app name, manifest string or log line can only ever be text.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./helpers/gateway";

const HTML_SINKS =
  /\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|document\.write|createContextualFragment|DOMParser|srcdoc|\.setHTML(Unsafe)?\b/;

describe("the dashboard's scripts", () => {
  const dir = join(repoRoot, "web");
  const scripts = readdirSync(dir).filter((name) => name.endsWith(".js"));

  it("exist to be checked", () => {
    expect(scripts.length).toBeGreaterThan(5);
  });

  it.each(scripts)("%s uses no sink that parses HTML", (name) => {
    const lines = readFileSync(join(dir, name), "utf8").split("\n");
    const hits = lines
      .map((line, i) => [i + 1, line] as const)
      .filter(([, line]) => HTML_SINKS.test(line) && !line.trim().startsWith("//"));
    expect(hits).toEqual([]);
  });
});
