// Install: a folder is previewed (what the app needs, gets and runs), the owner reads the
// review with every disclosure, and Install sends the review's digest as consent while the
// progress list shows each step. Nothing is installed before that press.
import { el, errorNotice, listOf, replaceChildren } from "./element.js";
import { findingsPart, installReview } from "./install-review.js";
import { installFailureNotice, installProgressView, newInstallId, withInstallProgress } from "./install-progress.js";

/** Builds the Install page; `installed()` runs after an install succeeded (lists and counts re-read). */
export function installPage(api, installed) {
  // `reviewed` is {source, digest} of the review on screen.
  const page = { api, installed, reviewed: null };
  Object.assign(
    page,
    installLayout(() => preview(page)),
  );
  return { section: page.section };
}

/** The page's frame: the folder form, then notices, progress and review, each still empty. */
function installLayout(onPreview) {
  const pathInput = el("input", {
    id: "install-path",
    name: "source",
    type: "text",
    required: true,
    autocomplete: "off",
    spellcheck: "false",
    placeholder: "/home/me/my-app",
  });
  const installNotices = el("div", { class: "notices", "aria-live": "polite" });
  const reviewHost = el("div", { class: "review-host" });
  const progressHost = el("div", { class: "progress-host" });
  const previewButton = el("button", { type: "submit", text: "Preview" });
  const installForm = el(
    "form",
    {
      class: "install-form",
      onSubmit: (event) => {
        event.preventDefault();
        onPreview();
      },
    },
    el("h3", { text: "From a folder" }),
    el("p", { class: "muted", text: "Preview shows what the app needs, gets and runs before anything is installed." }),
    el(
      "div",
      { class: "inline-form" },
      el("label", { for: "install-path", text: "Folder path" }),
      pathInput,
      previewButton,
    ),
  );
  const section = el(
    "section",
    { class: "card", id: "install", "aria-labelledby": "install-title" },
    el("div", { class: "section-head" }, el("h2", { id: "install-title", tabindex: "-1", text: "Install an app" })),
    installForm,
    installNotices,
    progressHost,
    reviewHost,
  );
  return { pathInput, installNotices, reviewHost, progressHost, previewButton, section };
}

/**
 * Shows the review of the folder `source` with Install and Cancel; Install consents to `digest`.
 * `page` is {api, installed, reviewed, pathInput, installNotices, reviewHost, progressHost}: the
 * Add page reviews the folder it generated from a package source through this same flow.
 */
export function showReview(page, source, review, digest, warning) {
  const { reviewHost } = page;
  page.reviewed = { source, digest };
  const installButton = el("button", {
    type: "button",
    class: "button-primary",
    text: "Install",
    onClick: () => install(page),
  });
  replaceChildren(
    reviewHost,
    warning ? el("p", { class: "notice notice-warn", role: "alert", text: warning }) : null,
    installReview(review, digest),
    el(
      "div",
      { class: "toolbar" },
      installButton,
      el("button", {
        type: "button",
        text: "Cancel",
        onClick: () => {
          page.reviewed = null;
          replaceChildren(reviewHost);
          page.pathInput.focus();
        },
      }),
    ),
  );
}

/** The notice for a folder whose app is installed already: installing it again is refused; Update is on its page. */
function alreadyInstalled(name, app) {
  return el(
    "div",
    { class: "notice notice-warn", role: "status", tabindex: "-1", "data-already-installed": name },
    el("p", {
      text: `${name} is already installed (version ${app.version ?? "unknown"}): installing it again would be refused.`,
    }),
    el(
      "p",
      {},
      "To install this folder as its new version, use Update on ",
      el("a", { href: `#/apps/${encodeURIComponent(name)}`, text: `the page of ${name}` }),
      ": it shows what the new version changes before anything runs.",
    ),
  );
}

function showRefusal(page, answer) {
  const detail = answer.detail && typeof answer.detail === "object" ? answer.detail : null;
  const findings = detail?.findings ?? detail?.review?.findings;
  replaceChildren(page.installNotices, errorNotice(answer));
  replaceChildren(
    page.reviewHost,
    findings
      ? el("div", { class: "review" }, findingsPart(findings, detail?.verdict ?? detail?.review?.verdict))
      : null,
  );
}

async function preview(page) {
  const { installNotices, reviewHost, previewButton } = page;
  const source = page.pathInput.value.trim();
  if (source === "") return;
  previewButton.disabled = true;
  replaceChildren(installNotices, el("p", { class: "muted", role: "status", text: "Scanning the folder…" }));
  replaceChildren(reviewHost);
  replaceChildren(page.progressHost);
  page.reviewed = null;
  const answer = await page.api.post("/api/apps/preview", { source });
  previewButton.disabled = false;
  if (!answer.ok) {
    if (!answer.isAuthRequired) showRefusal(page, answer);
    return;
  }
  replaceChildren(installNotices);
  const review = answer.data.review && typeof answer.data.review === "object" ? answer.data.review : {};
  // An app of this name is installed: an install would be refused (app_exists) after the whole
  // review, so say it first and point to its Update, which shows what the new version changes.
  const name = typeof review.app?.name === "string" ? review.app.name : "";
  const listed = name ? await page.api.get("/api/apps") : null;
  const installed = listed?.ok ? listOf(listed.data.apps).find((app) => app?.name === name) : undefined;
  if (installed) {
    replaceChildren(reviewHost, alreadyInstalled(name, installed));
    reviewHost.querySelector(".notice")?.focus();
    return;
  }
  showReview(page, source, review, answer.data.digest);
  reviewHost.querySelector(".review-title")?.setAttribute("tabindex", "-1");
  reviewHost.querySelector(".review-title")?.focus();
}

async function install(page) {
  const { api, installNotices, reviewHost } = page;
  if (page.reviewed === null) return;
  const { source, digest } = page.reviewed;
  // Kept data is adopted only with the owner's explicit tick (adopt_data: true).
  const adoptData = reviewHost.querySelector("input.adopt-data")?.checked === true;
  for (const button of reviewHost.querySelectorAll("button")) button.disabled = true;
  replaceChildren(installNotices, el("p", { class: "muted", role: "status", text: "Installing…" }));
  const installId = newInstallId();
  const progress = installProgressView(source);
  replaceChildren(page.progressHost, progress.node);
  const { answer, steps } = await withInstallProgress(api, installId, progress.update, () =>
    api.post("/api/apps", {
      source,
      consent: digest,
      install_id: installId,
      ...(adoptData ? { adopt_data: true } : {}),
    }),
  );
  const failedStep = progress.finish(answer, steps);
  if (answer.ok) {
    await showInstalled(page, answer, source);
    return;
  }
  if (answer.isAuthRequired) return;
  if (answer.code === "consent_required" && answer.detail && typeof answer.detail === "object") {
    // The bytes or the review changed since the preview: show what would be installed now.
    const review =
      answer.detail.review && typeof answer.detail.review === "object" ? answer.detail.review : answer.detail;
    replaceChildren(installNotices, installFailureNotice(answer, failedStep));
    showReview(
      page,
      source,
      review,
      answer.detail.digest,
      "What would be installed changed since the preview. Read this review again; Install now consents to it.",
    );
    return;
  }
  for (const button of reviewHost.querySelectorAll("button")) button.disabled = false;
  replaceChildren(installNotices, installFailureNotice(answer, failedStep));
}

/** After a successful install: the review goes, a link to the app's page shows, and the lists are re-read. */
async function showInstalled(page, answer, source) {
  page.reviewed = null;
  replaceChildren(page.reviewHost);
  const name = answer.data?.app?.name ?? answer.data?.name ?? source;
  replaceChildren(
    page.installNotices,
    el(
      "p",
      { class: "notice notice-info", role: "status" },
      `Installed ${name}.`,
      " ",
      el("a", { href: `#/apps/${encodeURIComponent(name)}`, text: `Open the page of ${name}` }),
    ),
  );
  page.pathInput.value = "";
  await page.installed();
}
