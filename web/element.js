// Builds DOM nodes from data without ever parsing it as HTML: strings become text nodes and
// attributes are set one by one, so a hostile app name or log line stays text (no XSS).
import { formatRelative, formatTime } from "./format.js";

/**
 * Creates an element. `props` keys: `class`, `text`, `on<Event>` handlers, `hidden`,
 * `disabled` and other boolean properties, and anything else as an attribute.
 * Children may be nodes, strings, numbers, arrays of those, or null/undefined/false (skipped).
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on") && typeof value === "function")
      node.addEventListener(key.slice(2).toLowerCase(), value);
    else if (value === true) node.setAttribute(key, "");
    else node.setAttribute(key, String(value));
  }
  append(node, children);
  return node;
}

/** Appends children (see el) to a node. */
export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Replaces every child of a node. */
export function replaceChildren(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

/** A gateway error as one alert line: its message, then its code. */
export function errorNotice(error) {
  return el(
    "p",
    { class: "notice notice-error", role: "alert" },
    el("span", { class: "notice-message", text: error.message }),
    " ",
    el("code", { class: "error-code", text: error.code }),
  );
}

/** A short confirmation or information line, announced politely. */
export function infoNotice(text) {
  return el("p", { class: "notice notice-info", role: "status", text });
}

/** A <time> of an ISO time: relative text, the full time as its title. */
export function timeElement(value) {
  return el("time", { datetime: value ?? "", title: formatTime(value), text: formatRelative(value) });
}

/** The value when it is an array, else none: an answer's list field read without trusting its shape. */
export function listOf(value) {
  return Array.isArray(value) ? value : [];
}
