// The machines of this edge (edge mode only): which are paired, which runs the apps, which are
// linked now; forgetting a lost one; and pairing another: the signed-in owner creates a one-time
// code here and types it on the machine (`personalclaw edge pair <this origin> --code`). The code
// is shown once, is good for 10 minutes and pairs one machine; the edge keeps only its hash.
import { el, errorNotice, infoNotice, listOf, replaceChildren, timeElement } from "./element.js";

/** One paired machine: its id, how and when it was paired, whether it runs the apps and is linked, and Forget. */
function machineItem(machine, forget) {
  const short = machine.machine.slice(0, 12);
  const facts = [
    el("code", { text: short }),
    " · paired ",
    timeElement(machine.paired_at),
    machine.paired_by === "pairing_code" ? " with a code" : " with the pairing secret",
  ];
  if (machine.forgotten_at !== null)
    return el("li", { "data-machine": machine.machine }, ...facts, " · forgotten ", timeElement(machine.forgotten_at));
  const wrap = el("span", { class: "toolbar" });
  const ask = () => {
    const cancel = el("button", {
      type: "button",
      text: "Cancel",
      "aria-label": `Cancel forgetting machine ${short}`,
      onClick: () => showButton(true),
    });
    replaceChildren(
      wrap,
      el("span", { class: "confirm-question", text: `Forget machine ${short}?` }),
      el("span", {
        class: "muted confirm-note",
        text: "Its links close now and its key never pairs again; to use it again, pair it anew with a code.",
      }),
      el("button", {
        type: "button",
        class: "button-danger",
        text: "Yes, forget",
        "aria-label": `Yes, forget machine ${short}`,
        onClick: () => void forget(machine.machine),
      }),
      cancel,
    );
    cancel.focus();
  };
  const showButton = (focus) => {
    const button = el("button", {
      type: "button",
      text: "Forget",
      "aria-label": `Forget machine ${short}`,
      onClick: ask,
    });
    replaceChildren(wrap, button);
    if (focus) button.focus();
  };
  showButton(false);
  return el(
    "li",
    { "data-machine": machine.machine },
    ...facts,
    machine.runs_apps ? " · runs the apps" : "",
    machine.connected ? " · linked" : " · not linked",
    " ",
    wrap,
  );
}

/** The paired machines, read again after each change; `notices` takes what a forget said. */
function machinesList(api, notices) {
  const list = el("div", {}, el("p", { class: "muted", text: "Loading machines…" }));
  const show = (machines) =>
    replaceChildren(
      list,
      machines.length === 0
        ? el("p", { class: "muted", text: "No machine is paired yet." })
        : el(
            "ul",
            { class: "machine-list" },
            machines.map((m) => machineItem(m, forget)),
          ),
    );
  const forget = async (machine) => {
    const answer = await api.post(`/api/edge/machines/${encodeURIComponent(machine)}/forget`, {});
    if (!answer.ok) {
      if (!answer.isAuthRequired) replaceChildren(notices, errorNotice(answer));
      return;
    }
    replaceChildren(notices, infoNotice(`Machine ${machine.slice(0, 12)} is forgotten: its links closed.`));
    show(listOf(answer.data.machines));
  };
  void (async () => {
    const answer = await api.get("/api/edge/machines");
    if (answer.ok) show(listOf(answer.data.machines));
    else if (!answer.isAuthRequired) replaceChildren(list, errorNotice(answer));
  })();
  return list;
}

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
  const notices = el("div", { class: "notices", "aria-live": "polite" });
  return el(
    "div",
    { class: "section-body", id: "pair-machine" },
    el("h3", { text: "Machines" }),
    el("p", {
      class: "muted",
      text: "Each machine links to this edge with its own key; the first one paired (of those not forgotten) runs the apps. Forget a machine that is lost.",
    }),
    notices,
    machinesList(api, notices),
    el("h3", { text: "Pair another machine" }),
    el("button", { type: "button", text: "Create a pairing code", onClick: () => void create() }),
    result,
  );
}
