// Install progress: the steps the host bridge reports for one install_id, polled from
// GET /api/apps/installs/{id} while POST /api/apps is pending, shown as one list whose
// rows change in place so a screen reader hears each change once, not the whole list again.
import { el } from "./element.js";

/**
 * The install steps in the order the host bridge runs them, named as the CLI names them.
 * @type {Array<[string, string]>}
 */
const STEPS = [
  ["stage", "Stage"],
  ["consent", "Consent"],
  ["python_dependencies", "Python dependencies"],
  ["npm_packages", "npm packages"],
  ["npm_closure", "Pinned npm closure"],
  ["install_hook", "Install hook"],
  ["verify", "Verify"],
  ["move_into_place", "Move into place"],
];
/**
 * The update steps in the order the host bridge runs them (host-bridge/install/update-app.ts).
 * @type {Array<[string, string]>}
 */
export const UPDATE_STEPS = [
  ["stage", "Stage"],
  ["consent", "Consent"],
  ["python_dependencies", "Python dependencies"],
  ["npm_packages", "npm packages"],
  ["npm_closure", "Pinned npm closure"],
  ["disk_space", "Disk space"],
  ["stop_old", "Stop the old version"],
  ["copy_data", "Copy its data"],
  ["keep_rollback", "Keep the old version"],
  ["move_venv", "Move its venv"],
  ["install_hook", "Install hook"],
  ["verify", "Verify"],
  ["move_into_place", "Move into place"],
  ["health", "Health check"],
  ["switch", "Switch to the new version"],
  ["rollback", "Put the old version back"],
];
const STEP_LABELS = new Map([...STEPS, ...UPDATE_STEPS]);
const STATUS_TONES = { started: "warn", done: "ok", failed: "bad", skipped: "neutral" };
const POLL_MS = 250;

/** The failure of an install as one alert: which step failed, then the error's message and code. */
export function installFailureNotice(answer, failedStep) {
  return el(
    "p",
    { class: "notice notice-error", role: "alert", "data-failed-step": failedStep ?? "" },
    el("strong", { text: failedStep ? `${STEP_LABELS.get(failedStep) ?? failedStep} failed: ` : "Install failed: " }),
    el("span", { class: "notice-message", text: answer.message }),
    " ",
    el("code", { class: "error-code", text: answer.code }),
  );
}

/** A fresh id for POST /api/apps's install_id: 22 characters of [A-Za-z0-9_-] from the browser's CSPRNG. */
export function newInstallId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** The latest event of each step, in the order the events arrived. */
function latestByStep(steps) {
  const latest = new Map();
  for (const event of Array.isArray(steps) ? steps : []) {
    if (event && typeof event === "object" && STEP_LABELS.has(event.step)) latest.set(event.step, event);
  }
  return latest;
}

/**
 * The progress view for one install (or, with UPDATE_STEPS, one update). `update(steps)` shows
 * the steps reported so far; `finish(answer, steps)` marks how it ended and answers the failed
 * step, if any (error.detail.step, else the step the bridge reported as failed).
 * @param {string} source
 * @param {Array<[string, string]>} [stepList]
 */
export function installProgressView(source, stepList = STEPS) {
  const isUpdate = stepList === UPDATE_STEPS;
  const rows = new Map();
  const list = el("ol", { class: "install-steps", "aria-live": "polite", "aria-relevant": "text" });
  for (const [step, label] of stepList) {
    const badge = el("span", { class: "badge badge-neutral step-status", text: "waiting" });
    const message = el("span", { class: "step-message muted" });
    // Each row is atomic: a change is read with its step's name ("npm packages skipped").
    const row = el(
      "li",
      { class: "install-step", "data-step": step, "data-status": "waiting", "aria-atomic": "true" },
      el("span", { class: "step-name", text: label }),
      badge,
      message,
    );
    rows.set(step, { row, badge, message });
    list.append(row);
  }
  const node = el(
    "div",
    { class: "install-progress", "data-install": "running" },
    el("h4", { class: "install-progress-title", text: isUpdate ? "Update progress" : "Install progress" }),
    el("p", { class: "muted mono wrap", text: source }),
    list,
  );

  function setRow(step, status, text) {
    const r = rows.get(step);
    if (!r || (r.row.dataset.status === status && r.message.textContent === text)) return;
    r.row.dataset.status = status;
    r.badge.className = `badge badge-${STATUS_TONES[status] ?? "neutral"} step-status`;
    r.badge.textContent = status.replace(/-/g, " ");
    if (r.message.textContent !== text) r.message.textContent = text;
  }

  function update(steps) {
    for (const [step, event] of latestByStep(steps)) {
      const status = typeof event.status === "string" ? event.status : "started";
      setRow(step, status, typeof event.message === "string" ? event.message : "");
    }
  }

  function finish(answer, steps) {
    update(steps);
    const latest = latestByStep(steps);
    if (answer.ok) {
      node.dataset.install = "done";
      for (const [step] of stepList) if (!latest.has(step)) setRow(step, "not-run", "");
      return null;
    }
    node.dataset.install = "failed";
    const reported = [...latest.values()].find((event) => event.status === "failed")?.step;
    const detailStep =
      answer.detail && typeof answer.detail === "object" && typeof answer.detail.step === "string"
        ? answer.detail.step
        : null;
    const failedStep = detailStep ?? reported ?? null;
    // A step that threw after saying "started" never reports "failed" itself.
    if (failedStep && STEP_LABELS.has(failedStep) && latest.get(failedStep)?.status !== "failed")
      setRow(failedStep, "failed", latest.get(failedStep)?.message ?? "");
    for (const [step] of stepList) if (!latest.has(step) && step !== failedStep) setRow(step, "not-run", "");
    return failedStep;
  }

  return { node, update, finish };
}

/** Installs on screen, by install id: asks for their steps at once (a live install.progress frame). */
const liveInstalls = new Map();

/** A live frame said install `installId` moved: its steps are read now rather than at the next poll. */
export function pokeInstallProgress(installId) {
  liveInstalls.get(installId)?.();
}

/**
 * Runs `request()` (the pending POST /api/apps) and, until it answers, asks for the steps of
 * `installId` every 250 ms, one question at a time. Answers the request's answer and the last
 * steps, read once more after it answered so the final step is never missed.
 */
export async function withInstallProgress(api, installId, onSteps, request) {
  const path = `/api/apps/installs/${encodeURIComponent(installId)}`;
  let isPending = true;
  let lastSteps = [];
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let inFlight = null;

  async function ask() {
    const answer = await api.get(path);
    // Progress is advisory: a refused or missing answer leaves the last steps on screen.
    if (answer.ok && Array.isArray(answer.data.steps) && answer.data.steps.length >= lastSteps.length) {
      lastSteps = answer.data.steps;
      onSteps(lastSteps);
    }
  }

  function schedule() {
    timer = setTimeout(() => {
      inFlight = ask().finally(() => {
        inFlight = null;
        if (isPending) schedule();
      });
    }, POLL_MS);
  }

  schedule();
  liveInstalls.set(installId, () => {
    if (inFlight === null && isPending) inFlight = ask().finally(() => (inFlight = null));
  });
  let answer;
  try {
    answer = await request();
  } finally {
    isPending = false;
    clearTimeout(timer);
    liveInstalls.delete(installId);
  }
  if (inFlight) await inFlight;
  if (!answer.isAuthRequired) await ask();
  return { answer, steps: lastSteps };
}
