// Pairing another machine with this edge (edge mode only): the signed-in owner creates a one-time
// code here and types it on the machine (`personalclaw edge pair <this origin> --code`). The code
// is shown once, is good for 10 minutes and pairs one machine; the edge keeps only its hash.
import { el, errorNotice, replaceChildren, timeElement } from "./element.js";

/** The part, or null on a local gateway (edge mode is an https origin; a local one is loopback http). */
export function pairingCodePart(api, location = window.location) {
  if (location.protocol !== "https:") return null;
  const result = el("div", { class: "notices", "aria-live": "polite" });
  const create = async () => {
    const answer = await api.post("/api/edge/pairing-codes", {});
    if (!answer.ok) {
      if (!answer.isAuthRequired) replaceChildren(result, errorNotice(answer));
      return;
    }
    replaceChildren(
      result,
      el(
        "div",
        { class: "notice notice-info" },
        el("p", {}, "Pairing code: ", el("code", { "data-field": "pairing-code", text: answer.data.code })),
        el("p", {}, "Good until ", timeElement(answer.data.expires_at), ", for one machine. On that machine run:"),
        el("pre", {}, el("code", { text: `personalclaw edge pair ${location.origin} --code` })),
        el("p", { class: "muted", text: "and type the code when it asks. It is shown only here, only now." }),
      ),
    );
  };
  return el(
    "div",
    { class: "section-body", id: "pair-machine" },
    el("h3", { text: "Pair another machine" }),
    el("p", {
      class: "muted",
      text: "A machine paired with this edge runs apps for it and links to it with its own key.",
    }),
    el("button", { type: "button", text: "Create a pairing code", onClick: () => void create() }),
    result,
  );
}
