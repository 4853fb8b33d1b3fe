// What a browser without a sign-in sees (AUTH-04): how to get a link, never a password form.
import { el } from "./element.js";

const ENDED_CODES = new Set(["session_signed_out", "session_expired"]);

/**
 * The sign-in instructions. `note` (optional) says why an earlier sign-in ended: a gateway
 * refusal ({code, message}) or the page's own words after a sign-out ({message}).
 */
export function signInView(note) {
  const showsNote = note && typeof note.message === "string" && (note.code === undefined || ENDED_CODES.has(note.code));
  return el(
    "section",
    { class: "card sign-in", "aria-labelledby": "sign-in-title" },
    el("h2", { id: "sign-in-title", tabindex: "-1", text: "Sign in" }),
    showsNote
      ? el(
          "p",
          { class: "notice notice-info", role: "status" },
          el("span", { text: note.message }),
          note.code ? [" ", el("code", { class: "error-code", text: note.code })] : null,
        )
      : null,
    el("p", { text: "This dashboard signs in with a link, not a password. On the machine running PersonalClaw, run:" }),
    el("pre", { class: "command" }, el("code", { text: "personalclaw token" })),
    el("p", {
      text: "and open the link it prints in this browser. Opening it signs this browser in with a cookie and takes the token out of the address bar.",
    }),
    el(
      "ul",
      { class: "link-facts" },
      el("li", {
        text: "The link is not a one-time code: it is an owner credential for as long as it lasts (20 hours unless you asked for another time with --ttl), and a script can use it as a Bearer token until then.",
      }),
      el("li", {
        text: "The first address that opens it keeps it; opened from any other address, it is refused.",
      }),
      el(
        "li",
        {},
        "End a sign-in on the Devices page, or end every sign-in at once with ",
        el("code", { text: "personalclaw auth rotate-key" }),
        ".",
      ),
    ),
    el(
      "p",
      { class: "muted" },
      "The link printed by ",
      el("code", { text: "personalclaw start" }),
      " works the same way.",
    ),
  );
}
