// Store: the entries of the MCP Registries the owner configured (install.mcp_registries), one
// registry at a time, with its search and its next page. Each entry says where it came from:
// "official MCP Registry" only when the gateway asked the official registry's own URL, never
// because an entry or a registry says so. An entry an installed app came from is marked; Add
// takes its spec to the Add page, where it is resolved, reviewed and consented to like any source.
import { el, errorNotice, listOf, replaceChildren } from "./element.js";

/** Builds the Store page; `add(spec)` opens the Add page with the entry's spec. */
export function storePage(api, add) {
  const state = { registry: null, search: "", cursor: null };
  const registrySelect = el("select", { id: "store-registry", name: "registry" });
  const searchInput = el("input", {
    id: "store-search",
    name: "search",
    type: "search",
    autocomplete: "off",
    spellcheck: "false",
    placeholder: "memory",
  });
  const notices = el("div", { class: "notices", "aria-live": "polite" });
  const provenance = el("p", { class: "store-provenance" });
  const list = el("ul", { class: "store-entries", "aria-label": "Registry entries" });
  const more = el("div", { class: "toolbar" });
  const form = el(
    "form",
    {
      class: "inline-form store-form",
      onSubmit: (event) => {
        event.preventDefault();
        void load(true);
      },
    },
    el("label", { for: "store-registry", text: "Registry" }),
    registrySelect,
    el("label", { for: "store-search", text: "Search" }),
    searchInput,
    el("button", { type: "submit", text: "Search" }),
  );
  const section = el(
    "section",
    { class: "card", id: "store", "aria-labelledby": "store-title" },
    el("div", { class: "section-head" }, el("h2", { id: "store-title", tabindex: "-1", text: "Store" })),
    el("p", {
      class: "muted",
      text: "MCP servers listed by the registries you configured (setting install.mcp_registries). A registry vouches for who published a name, not for what its package does: Add shows the pinned review before anything is installed.",
    }),
    form,
    notices,
    provenance,
    list,
    more,
  );

  function showRegistries(registries, chosen) {
    replaceChildren(
      registrySelect,
      listOf(registries).map((r) =>
        el("option", { value: r.url, selected: r.url === chosen, text: `${r.url}${r.official ? " (official)" : ""}` }),
      ),
    );
    registrySelect.disabled = listOf(registries).length < 2;
  }

  async function load(fresh) {
    if (fresh) {
      state.registry = registrySelect.value || null;
      state.search = searchInput.value.trim();
      state.cursor = null;
      replaceChildren(list);
    }
    replaceChildren(notices, el("p", { class: "muted", role: "status", text: "Asking the registry…" }));
    replaceChildren(more);
    const query = new URLSearchParams();
    if (state.registry) query.set("registry", state.registry);
    if (state.search) query.set("search", state.search);
    if (state.cursor) query.set("cursor", state.cursor);
    const answer = await api.get(`/api/sources/registry${query.size > 0 ? `?${query}` : ""}`);
    if (!answer.ok) {
      if (!answer.isAuthRequired) replaceChildren(notices, errorNotice(answer));
      return;
    }
    const { registries, registry, entries, nextCursor } = answer.data;
    showRegistries(registries, registry);
    state.registry = registry;
    state.cursor = nextCursor;
    replaceChildren(provenance, provenanceLine(registries, registry));
    const shown = listOf(entries);
    replaceChildren(
      notices,
      registry === null
        ? el("p", { class: "notice notice-info", text: "No registry is configured (setting install.mcp_registries)." })
        : shown.length === 0 && fresh
          ? el("p", { class: "muted", role: "status", text: "No entry matches." })
          : null,
    );
    list.append(...shown.map((entry) => entryItem(entry, add)));
    if (nextCursor)
      replaceChildren(more, el("button", { type: "button", text: "More", onClick: () => void load(false) }));
  }

  let isLoaded = false;
  return {
    section,
    refresh: () => load(true),
    /** Loads the first page the first time the Store is shown. */
    shown() {
      if (isLoaded) return;
      isLoaded = true;
      void load(true);
    },
  };
}

function provenanceLine(registries, registry) {
  const chosen = listOf(registries).find((r) => r.url === registry);
  if (!chosen) return null;
  return chosen.official
    ? ["Entries from ", el("strong", { text: "the official MCP Registry" }), ` (${chosen.url}).`]
    : [
        "Entries from ",
        el("strong", { text: chosen.url }),
        ", a registry you configured; it is not the official MCP Registry.",
      ];
}

/** One entry: name, version, what it lists, where it came from, whether it is installed, and Add. */
function entryItem(entry, add) {
  const packages = listOf(entry.packages).map(
    (p) => `${p.registryType} ${p.identifier}${p.version ? `@${p.version}` : ""}`,
  );
  const installed = entry.installed;
  return el(
    "li",
    { class: "store-entry", "data-entry": entry.name },
    el(
      "div",
      { class: "store-entry-head" },
      el("strong", { class: "store-entry-name", text: entry.title || entry.name }),
      " ",
      el("span", { class: "muted", text: entry.version }),
      " ",
      el("span", {
        class: `badge ${entry.official ? "badge-ok" : "badge-neutral"}`,
        "data-provenance": entry.official ? "official" : "configured",
        text: entry.official ? "official MCP Registry" : `from ${entry.registry}`,
      }),
      installed
        ? [
            " ",
            el("span", {
              class: "badge badge-ok",
              "data-installed": installed.app,
              text: `installed as ${installed.app} ${installed.version}`,
            }),
          ]
        : null,
    ),
    entry.title ? el("p", { class: "muted", text: entry.name }) : null,
    entry.description ? el("p", { text: entry.description }) : null,
    packages.length > 0 ? el("p", { class: "muted", text: `Packages: ${packages.join(", ")}` }) : null,
    el(
      "div",
      { class: "toolbar" },
      el("button", {
        type: "button",
        text: installed ? "Update…" : "Add…",
        "aria-label": `${installed ? "Update" : "Add"} ${entry.name}`,
        onClick: () => add(entry.spec),
      }),
    ),
  );
}
