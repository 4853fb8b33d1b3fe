// The environment an app's MCP server starts with: the manifest's declared values with `${DATA}`
// standing for the app's data folder as the server sees it, under the sandbox's allowlist,
// which wins (an app never sets PATH, NODE_OPTIONS or the proxy variables for itself). The one
// exception is where a server keeps its state: a HOME or XDG_*_HOME declared inside ${DATA}
// replaces the private /tmp one, so a server that writes ~/.something keeps it in data/.
/** What `${DATA}` in a declared value stands for: the app's data folder as the server sees it. */
export const DATA_PLACEHOLDER = "${DATA}";

const STATE_FOLDERS = new Set(["HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"]);

/** The server's environment from its declared values, the sandbox's allowlist and its data folder. */
export function serverEnvironment(
  declared: Readonly<Record<string, string>>,
  allowlisted: Readonly<Record<string, string>>,
  app: { dataDir: string; hasStorage: boolean },
): Record<string, string> {
  const expanded: Record<string, string> = {};
  for (const [name, value] of Object.entries(declared))
    expanded[name] = value.split(DATA_PLACEHOLDER).join(app.dataDir);
  const env: Record<string, string> = { ...expanded, ...allowlisted };
  // Only an app with a data/ of its own has somewhere to keep state; without one the private /tmp stays.
  if (app.hasStorage)
    for (const [name, value] of Object.entries(declared))
      if (STATE_FOLDERS.has(name) && (value === DATA_PLACEHOLDER || value.startsWith(`${DATA_PLACEHOLDER}/`)))
        env[name] = expanded[name]!;
  return env;
}
