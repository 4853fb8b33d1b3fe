// The dashboard's pages by address. The hash is the route (`#/apps`, `#/apps/<name>`,
// `#/install`, ...): the browser keeps it in history, so back and forward move between
// pages, and a reload or a bookmark opens the same page. The older `#apps` anchors still work.

const PAGES = {
  apps: { section: "apps", title: "Apps", nav: "apps" },
  install: { section: "install", title: "Install an app", nav: "install" },
  add: { section: "add", title: "Add an MCP server", nav: "add" },
  store: { section: "store", title: "Store", nav: "store" },
  inbox: { section: "inbox", title: "Inbox", nav: "inbox" },
  devices: { section: "devices", title: "Devices", nav: "devices" },
  "security-log": { section: "securityLog", title: "Security log", nav: "security-log" },
  settings: { section: "settings", title: "Settings", nav: "settings" },
  secrets: { section: "settings", title: "Settings", nav: "settings" },
};

const APP_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/**
 * The page a hash names: {page, section, title, nav}, `{page: "app", name}` for one app's
 * page, or `{page: "not-found"}`. An empty hash is the Apps page.
 */
export function routeOf(hash) {
  const parts = String(hash ?? "")
    .replace(/^#\/?/, "")
    .split("/")
    .filter((part) => part !== "");
  if (parts.length === 0) return { page: "list", ...PAGES.apps };
  if (parts[0] === "apps" && parts.length === 2) {
    const name = decodedName(parts[1]);
    if (name !== null && APP_NAME.test(name)) return { page: "app", name, title: name, nav: "apps" };
    return { page: "not-found", title: "No such page", nav: null };
  }
  const known = parts.length === 1 && Object.hasOwn(PAGES, parts[0]) ? PAGES[parts[0]] : null;
  if (known === null) return { page: "not-found", title: "No such page", nav: null };
  return { page: known.section === "settings" ? "settings" : "list", ...known };
}

function decodedName(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}
