// What a browser sees when its own navigation fails: a small page saying what happened and
// what to do, with the same status and the stable code, instead of a raw JSON envelope.
// Scripts, fetch and XHR keep the envelope. The page is static and inert: no script at all,
// a CSP that allows only the dashboard's stylesheet, and every text passed through the
// text-safety rule, because a message may quote a path or an app name an attacker chose.
import type { GatewayError } from "../../kernel/contracts/errors";
import { safeHtmlText } from "../../kernel/text/text-safety";
import { isAppBackendPath, isGatewayApiPath } from "../guards/request-path";

const PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * Whether a failed request is the owner's own navigation to a page: a GET or HEAD outside
 * the API (`/api/*` and an app's `/apps/<name>/api/*` answer their envelope whoever asks),
 * not started by another site, that does not ask for JSON, and that says it navigates
 * (Sec-Fetch-Mode: navigate) or, from a browser that sends no fetch metadata, accepts text/html.
 */
export function isPageNavigation(method: string, path: string, headers: Headers): boolean {
  if (method !== "GET" && method !== "HEAD") return false;
  if (isGatewayApiPath(path) || isAppBackendPath(path)) return false;
  const site = headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") return false;
  const accept = (headers.get("accept") ?? "").toLowerCase();
  if (accept.includes("application/json")) return false;
  const mode = headers.get("sec-fetch-mode");
  if (mode !== null) return mode === "navigate";
  return accept.includes("text/html");
}

interface Guidance {
  title: string;
  advice: string;
  /** A command to run on the gateway's machine, shown as one. */
  command?: string;
  /** Where the page's one link leads, and its words. */
  link: { href: string; text: string };
}

const DASHBOARD = { href: "/", text: "Go to the dashboard" };
const APPS = { href: "/#/apps", text: "Go to the dashboard's Apps page" };

const SIGN_IN: Guidance = {
  title: "Sign in again",
  advice:
    "On the machine running PersonalClaw, run the command below and open the link it prints in this browser. The link signs this browser in; nobody else should open it.",
  command: "personalclaw token",
  link: DASHBOARD,
};

const GUIDANCE: Readonly<Record<string, Guidance>> = {
  session_required: SIGN_IN,
  session_expired: SIGN_IN,
  session_signed_out: SIGN_IN,
  auth_bearer_invalid: SIGN_IN,
  auth_cookie_conflict: SIGN_IN,
  auth_credential_conflict: SIGN_IN,
  fresh_sign_in_required: SIGN_IN,
  app_disabled: {
    title: "This app is disabled",
    advice: "Enable it on the dashboard's Apps page, then open it again.",
    link: APPS,
  },
  app_not_found: {
    title: "This app is not installed",
    advice: "No app by this name is installed on this gateway. The dashboard's Apps page lists the installed apps.",
    link: APPS,
  },
  app_ui_not_found: {
    title: "This app has no such page",
    advice: "Open the app from the dashboard's Apps page instead of this address.",
    link: APPS,
  },
  app_backend_unavailable: {
    title: "This app is not answering",
    advice: "Its backend is starting, stopped or unhealthy. The app's page on the dashboard shows its status and log.",
    link: APPS,
  },
  not_found: {
    title: "Nothing is here",
    advice: "Check the address, or start again from the dashboard.",
    link: DASHBOARD,
  },
  storage_full: {
    title: "The disk is full",
    advice: "Free some space on the machine running PersonalClaw; the gateway resumes by itself.",
    link: DASHBOARD,
  },
};

const FALLBACK: Guidance = {
  title: "This did not work",
  advice: "Go back to the dashboard and try again. The code below names what happened.",
  link: DASHBOARD,
};

/** The page for a failed navigation: the error's status, its headers, its code and message. */
export function browserErrorPage(error: GatewayError, method: string): Response {
  const guidance = GUIDANCE[error.code] ?? FALLBACK;
  const text = (value: string) => safeHtmlText(value);
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${text(guidance.title)} · PersonalClaw</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/dashboard.css">
</head>
<body class="error-page">
<header class="topbar"><div class="topbar-inner"><p class="brand">PersonalClaw</p></div></header>
<main id="app">
<section class="card" aria-labelledby="error-title" data-error-code="${text(error.code)}">
<h1 id="error-title">${text(guidance.title)}</h1>
<p class="notice notice-error"><span class="notice-message">${text(error.message)}</span> <code class="error-code">${text(error.code)}</code></p>
<p>${text(guidance.advice)}</p>
${guidance.command ? `<pre class="command"><code>${text(guidance.command)}</code></pre>\n` : ""}<p><a href="${text(guidance.link.href)}">${text(guidance.link.text)}</a></p>
<p class="muted">HTTP ${error.status}</p>
</section>
</main>
</body>
</html>
`;
  const headers = new Headers(error.headers);
  headers.set("Content-Type", "text/html; charset=utf-8");
  headers.set("Content-Security-Policy", PAGE_CSP);
  headers.set("Cache-Control", "no-store");
  headers.set("X-Content-Type-Options", "nosniff");
  headers.set("Referrer-Policy", "no-referrer");
  return new Response(method === "HEAD" ? null : html, { status: error.status, headers });
}
