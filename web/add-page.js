// Add: a published MCP server by its source (npm:, pypi:, registry:, an .mcpb URL or a bundle's
// path on this machine) with the variables, folder needs and arguments `apps add` takes. The
// gateway has the bridge resolve it, pin every package and generate the app in quarantine
// (POST /api/sources/stage); the review and consent digest shown are the ordinary ones, and
// Install (or Update, when an app of the name is installed) consents to exactly that digest.
// Nothing is installed before that press.
import { el, errorNotice, replaceChildren } from "./element.js";
import { showReview } from "./install-page.js";
import { installReview } from "./install-review.js";
import {
  installFailureNotice,
  installProgressView,
  newInstallId,
  UPDATE_STEPS,
  withInstallProgress,
} from "./install-progress.js";
import { changeList } from "./update-changes.js";
import { updatingText } from "./update-control.js";

const EXAMPLE = "npm:@modelcontextprotocol/server-memory@2025.8.4";

/** Non-empty lines of a text box, trimmed. */
function linesOf(input) {
  return input.value
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

/**
 * Builds the Add page; `installed()` runs after an install or update succeeded. `prefill(spec, env)`
 * puts a source (and its variables) in the form, as the Store and an app's update notice do.
 */
export function addPage(api, installed) {
  const page = { api, installed, reviewed: null };
  Object.assign(
    page,
    addLayout(() => stage(page)),
  );
  return {
    section: page.section,
    prefill(spec, env = []) {
      page.pathInput.value = spec;
      page.envInput.value = env.join("\n");
      replaceChildren(page.installNotices);
      replaceChildren(page.reviewHost);
      replaceChildren(page.progressHost);
    },
  };
}

function textBox(id, label, hint, rows) {
  return el(
    "div",
    { class: "field" },
    el("label", { for: id, text: label }),
    el("textarea", { id, rows, spellcheck: "false", autocomplete: "off", "aria-describedby": `${id}-hint` }),
    el("p", { class: "muted field-hint", id: `${id}-hint`, text: hint }),
  );
}

/** The page's frame: the source form with its optional choices, then notices, progress and review. */
function addLayout(onStage) {
  const pathInput = el("input", {
    id: "add-spec",
    name: "spec",
    type: "text",
    required: true,
    autocomplete: "off",
    spellcheck: "false",
    placeholder: EXAMPLE,
    "aria-describedby": "add-spec-hint",
  });
  const env = textBox(
    "add-env",
    "Variables (optional)",
    "One NAME=VALUE per line; ${DATA} stands for the app's own data folder, e.g. MEMORY_FILE_PATH=${DATA}/memory.jsonl.",
    2,
  );
  const folders = textBox(
    "add-folders",
    "Folder needs (optional)",
    "One need per line, NEED, NEED:read or NEED:read-write; you grant a folder to each on the app's page.",
    1,
  );
  const args = textBox("add-args", "Arguments (optional)", "One argument per line, after the server's program.", 1);
  const stageButton = el("button", { type: "submit", class: "button-primary", text: "Review" });
  const form = el(
    "form",
    {
      class: "add-form",
      onSubmit: (event) => {
        event.preventDefault();
        onStage();
      },
    },
    el("div", { class: "field" }, el("label", { for: "add-spec", text: "Source" }), pathInput),
    el("p", {
      class: "muted field-hint",
      id: "add-spec-hint",
      text: "npm:<name>@<version>, pypi:<name>==<version>, registry:<server name>, an https:// URL of an .mcpb bundle, or a bundle's absolute path on the gateway's machine.",
    }),
    env,
    folders,
    args,
    el("div", { class: "toolbar" }, stageButton),
  );
  const installNotices = el("div", { class: "notices", "aria-live": "polite" });
  const progressHost = el("div", { class: "progress-host" });
  const reviewHost = el("div", { class: "review-host" });
  const section = el(
    "section",
    { class: "card", id: "add", "aria-labelledby": "add-title" },
    el(
      "div",
      { class: "section-head" },
      el("h2", { id: "add-title", tabindex: "-1", text: "Add a published MCP server" }),
    ),
    el("p", {
      class: "muted",
      text: "PersonalClaw resolves the source, pins every package by its hash and shows what the server would get and run. It runs confined, with no network, and nothing is installed before you confirm.",
    }),
    form,
    installNotices,
    progressHost,
    reviewHost,
  );
  return {
    pathInput,
    envInput: env.querySelector("textarea"),
    foldersInput: folders.querySelector("textarea"),
    argsInput: args.querySelector("textarea"),
    stageButton,
    installNotices,
    progressHost,
    reviewHost,
    section,
  };
}

/** A status line for long work, with the seconds it has taken so far; `stop()` ends its clock. */
function workingNotice(text) {
  const seconds = el("span", { class: "elapsed", "aria-hidden": "true", text: "" });
  const started = Date.now();
  const timer = setInterval(() => (seconds.textContent = ` ${Math.round((Date.now() - started) / 1000)} s`), 1000);
  return { node: el("p", { class: "muted", role: "status" }, text, seconds), stop: () => clearInterval(timer) };
}

async function stage(page) {
  const spec = page.pathInput.value.trim();
  if (spec === "") return;
  page.stageButton.disabled = true;
  page.reviewed = null;
  replaceChildren(page.reviewHost);
  replaceChildren(page.progressHost);
  const working = workingNotice(`Resolving ${spec} and pinning every package it needs…`);
  replaceChildren(page.installNotices, working.node);
  const answer = await page.api.post("/api/sources/stage", {
    spec,
    env: linesOf(page.envInput),
    folders: linesOf(page.foldersInput),
    args: linesOf(page.argsInput),
  });
  working.stop();
  page.stageButton.disabled = false;
  if (!answer.ok) {
    if (!answer.isAuthRequired) replaceChildren(page.installNotices, errorNotice(answer));
    return;
  }
  replaceChildren(page.installNotices);
  const { name, source, review, digest } = answer.data;
  if (answer.data.installed) showUpdateReview(page, name, source, answer.data);
  else showReview(page, source, review && typeof review === "object" ? review : {}, digest);
  page.reviewHost.querySelector(".review-title")?.setAttribute("tabindex", "-1");
  page.reviewHost.querySelector(".review-title")?.focus();
}

/** The app is installed: the review is of its update, with what changes; Update consents to its digest. */
function showUpdateReview(page, name, source, preview) {
  replaceChildren(
    page.reviewHost,
    el("p", {
      class: `notice ${preview.consentNeeded ? "notice-warn" : "notice-info"}`,
      text: preview.consentNeeded
        ? `${name} is installed: this is its update. It changes what the app gets; read what changes. Update consents to it.`
        : `${name} is installed: this update changes nothing you consented to.`,
    }),
    changeList(preview, null),
    installReview(preview.review, preview.digest),
    el(
      "div",
      { class: "toolbar" },
      el("button", {
        type: "button",
        class: "button-primary",
        text: "Update",
        "aria-label": `Update ${name}`,
        onClick: () => update(page, name, source, preview.digest),
      }),
      el("button", { type: "button", text: "Cancel", onClick: () => replaceChildren(page.reviewHost) }),
    ),
  );
}

async function update(page, name, source, digest) {
  for (const button of page.reviewHost.querySelectorAll("button")) button.disabled = true;
  const installed = await page.api.get(`/api/apps/${encodeURIComponent(name)}`);
  replaceChildren(
    page.installNotices,
    el("p", {
      class: "muted",
      role: "status",
      text: updatingText(installed.ok ? installed.data : null),
    }),
  );
  const installId = newInstallId();
  const progress = installProgressView(source, UPDATE_STEPS);
  replaceChildren(page.progressHost, progress.node);
  const { answer, steps } = await withInstallProgress(page.api, installId, progress.update, () =>
    page.api.post(`/api/apps/${encodeURIComponent(name)}/update`, { source, consent: digest, install_id: installId }),
  );
  const failedStep = progress.finish(answer, steps);
  if (answer.isAuthRequired) return;
  if (!answer.ok) {
    for (const button of page.reviewHost.querySelectorAll("button")) button.disabled = false;
    replaceChildren(page.installNotices, installFailureNotice(answer, failedStep));
    return;
  }
  replaceChildren(page.reviewHost);
  replaceChildren(
    page.installNotices,
    el(
      "p",
      { class: "notice notice-info", role: "status" },
      `Updated ${name} to ${answer.data.app?.version ?? "the new version"}.`,
      " ",
      el("a", { href: `#/apps/${encodeURIComponent(name)}`, text: `Open the page of ${name}` }),
    ),
  );
  await page.installed();
}
