// Which program an app's command runs: `python`/`python3` is the app's own venv when it has one
// (it declared Python dependencies), for its backend and its MCP servers alike, so a module
// installed only in the venv is importable wherever the app's Python runs. Any other command is
// found on the sandbox's PATH as written (`node` loads the app's pinned node_modules from its folder).
import { existsSync } from "node:fs";
import { venvPython } from "../install/install-dependencies";

export function appInterpreter(appDir: string, command: string): string {
  return (command === "python" || command === "python3") && existsSync(venvPython(appDir))
    ? venvPython(appDir)
    : command;
}
