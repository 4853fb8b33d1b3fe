// The published Python MCP server the suites install with `apps add pypi:` (there is no PyPI
// here): wheels built from test/fixtures/py-mcp-words — the server, with a console script, which
// requires pc-word-tools as '>=1.0,<2' — served by the PyPI index stand-in, which also serves a
// pc-word-tools 2.0.0 the range leaves out.
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./gateway";
import { startPypiIndex, type PypiIndexStandIn } from "./pypi-index";
import { buildWheel } from "./python-wheel";

export const WORDS_FIXTURE = join(repoRoot, "test", "fixtures", "py-mcp-words");
export const WORDS_SPEC = "pypi:pc-mcp-words-server==1.0.0";
export const WORDS_APP = "pc-mcp-words-server";

/** Builds the wheels under `root` and serves them; answers the index and the pinned tools wheel's path. */
export async function startWordsIndex(root: string): Promise<{ index: PypiIndexStandIn; toolsWheel: string }> {
  const wheels = join(root, "wheels");
  const toolsWheel = buildWheel(wheels, "pc-word-tools", "1.0.0", join(WORDS_FIXTURE, "wheel-src"));
  const tooNew = buildWheel(wheels, "pc-word-tools", "2.0.0", join(WORDS_FIXTURE, "wheel-src"));
  const serverSrc = join(root, "server-src");
  mkdirSync(join(serverSrc, "pc_mcp_words_server"), { recursive: true });
  copyFileSync(join(WORDS_FIXTURE, "app", "server.py"), join(serverSrc, "pc_mcp_words_server", "__init__.py"));
  const serverWheel = buildWheel(wheels, "pc-mcp-words-server", "1.0.0", serverSrc, {
    requires: ["pc-word-tools (>=1.0,<2)", 'pc-word-tools-docs ; extra == "docs"'],
    scripts: ["pc-mcp-words-server=pc_mcp_words_server:main"],
  });
  return { index: await startPypiIndex([serverWheel, toolsWheel, tooNew]), toolsWheel };
}
