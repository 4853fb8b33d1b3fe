import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sourceSummary } from "../../kernel/contracts/source-review";
import { NO_CHOICES, writeGeneratedApp } from "../sources/npm-app";
import { generatePypiApp } from "../sources/pypi-app";
import type { PinnedWheel, ResolvedPypiProject } from "../sources/pypi-resolve";
import { previewBundle } from "./preview";

function wheel(name: string, version: string, tags: string, bytes: Buffer): PinnedWheel {
  const file = `${name}-${version}-${tags}.whl`;
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  return { name, version, file, url: `http://127.0.0.2:8080/files/${file}`, sha256, size: bytes.length, bytes };
}

const PROJECT: ResolvedPypiProject = {
  index: "http://127.0.0.2:8080/simple/",
  root: { name: "weather-mcp", version: "1.2.0" },
  wheels: [
    wheel("weather_mcp", "1.2.0", "py3-none-any", Buffer.alloc(3000, 1)),
    wheel("fastjson", "2.0.0", "cp312-cp312-manylinux_2_17_x86_64", Buffer.alloc(5000, 2)),
  ],
  consoleScripts: { "weather-mcp": "weather_mcp.server:main" },
  summary: "Weather for agents",
};

describe("the review of an app generated from a PyPI project says what its closure pins", () => {
  let scratch: string;
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "pc-pypi-review-"));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it("the wheels' count and size, the ones that are not pure Python, and the summary's PyPI source", async () => {
    const quarantineRoot = join(scratch, "quarantine");
    const folder = await writeGeneratedApp(quarantineRoot, generatePypiApp(PROJECT, NO_CHOICES));
    const previewed = await previewBundle(folder, {
      quarantineRoot,
      reservedNames: new Set(),
      core: { version: "0.1.0", features: [] },
    });
    if (!previewed.ok) throw new Error(`${previewed.code}: ${previewed.message}`);
    expect(previewed.review.pypiClosure).toEqual({
      source: "pypi:weather-mcp==1.2.0",
      index: PROJECT.index,
      packages: 2,
      bytes: 8000,
      pinned: ["fastjson==2.0.0", "weather_mcp==1.2.0"],
      native: ["fastjson-2.0.0-cp312-cp312-manylinux_2_17_x86_64.whl"],
    });
    expect(sourceSummary(previewed.review)).toMatchObject({
      kind: "PyPI project",
      name: "weather-mcp",
      version: "1.2.0",
      pinned: "2 wheels, 7.8 KiB, each by its sha256",
      native: ["fastjson-2.0.0-cp312-cp312-manylinux_2_17_x86_64.whl"],
    });
  });

  it("a folder the owner wrote, not one apps add generated, shows no closure whatever file it carries", async () => {
    const folder = await writeGeneratedApp(join(scratch, "elsewhere"), generatePypiApp(PROJECT, NO_CHOICES));
    const previewed = await previewBundle(folder, {
      quarantineRoot: join(scratch, "quarantine"),
      reservedNames: new Set(),
      core: { version: "0.1.0", features: [] },
    });
    if (!previewed.ok) throw new Error(`${previewed.code}: ${previewed.message}`);
    expect(previewed.review.pypiClosure).toBeUndefined();
  });
});
