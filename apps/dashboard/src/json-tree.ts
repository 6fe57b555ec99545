import { copy } from "./copy.js";
import { h } from "./dom.js";

/**
 * A JSON value as a tree: objects and arrays fold and unfold, and every node copies its path
 * (jq syntax: `.data.object.id`, `.items[0]`, `.["odd key"]`), ready for a filter or a test.
 */

/** Children drawn per container before a "show more" (a 10 MB array stays responsive). */
const CHUNK = 200;
/** Containers open at first down to this depth, if the whole tree is not larger than OPEN_ALL. */
const OPEN_DEPTH = 2;
const OPEN_ALL = 300;

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The path of `parent`'s child `key`; the root's path is "" (shown as "."). */
export function childPath(parent: string, key: string | number): string {
  if (typeof key === "string" && IDENT.test(key)) return `${parent}.${key}`;
  const index = typeof key === "number" ? String(key) : JSON.stringify(key);
  return `${parent || "."}[${index}]`;
}

function nodeCount(value: unknown, budget = OPEN_ALL + 1): number {
  let n = 0;
  const stack = [value];
  while (stack.length && n < budget) {
    const v = stack.pop();
    n += 1;
    if (v && typeof v === "object") stack.push(...Object.values(v as object));
  }
  return n;
}

function scalar(value: unknown): HTMLElement {
  if (value === null) return h("span", { class: "j-null" }, "null");
  if (typeof value === "string") return h("span", { class: "j-string" }, JSON.stringify(value));
  if (typeof value === "number") return h("span", { class: "j-number" }, String(value));
  return h("span", { class: "j-bool" }, String(value));
}

function summary(value: object): string {
  return Array.isArray(value) ? `[${value.length}]` : `{${Object.keys(value).length}}`;
}

function copyPathButton(at: string): HTMLButtonElement {
  const path = at || ".";
  const button = h("button", { type: "button", class: "copy-path", "data-label": "copy path", "aria-label": `Copy path ${path}`, title: path }, "copy path");
  button.addEventListener("click", () => void copy(path, button));
  return button;
}

interface Options {
  openAll: boolean;
}

function entries(value: object): [string | number, unknown][] {
  return Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
}

function childList(value: object, path: string, depth: number, o: Options): HTMLUListElement {
  const list = h("ul", { class: "j-children" });
  const all = entries(value);
  const more = (from: number) => {
    for (const [k, v] of all.slice(from, from + CHUNK)) list.append(node(k, v, childPath(path, k), depth + 1, o));
    if (all.length > from + CHUNK) {
      const button = h("button", { type: "button", class: "btn small" }, `Show ${Math.min(CHUNK, all.length - from - CHUNK)} more of ${all.length}`);
      const li = h("li", {}, button);
      button.addEventListener("click", () => (li.remove(), more(from + CHUNK)));
      list.append(li);
    }
  };
  more(0);
  return list;
}

function node(key: string | number | undefined, value: unknown, path: string, depth: number, o: Options): HTMLLIElement {
  const label = key === undefined ? null : h("span", { class: typeof key === "number" ? "j-index" : "j-key" }, typeof key === "number" ? String(key) : JSON.stringify(key), ": ");
  if (!value || typeof value !== "object") {
    return h("li", { class: "j-node", "data-path": path }, h("span", { class: "j-line" }, h("span", { class: "j-spacer" }), label, scalar(value), copyPathButton(path)));
  }
  let children: HTMLUListElement | undefined;
  const toggle = h("button", { type: "button", class: "j-toggle", "aria-expanded": "false", "aria-label": `${key === undefined ? "root" : String(key)}: expand` });
  const li = h(
    "li",
    { class: "j-node", "data-path": path },
    h("span", { class: "j-line" }, toggle, label, h("span", { class: "j-summary" }, summary(value)), copyPathButton(path)),
  );
  const set = (open: boolean) => {
    if (open && !children) li.append((children = childList(value, path, depth, o)));
    if (children) children.hidden = !open;
    toggle.setAttribute("aria-expanded", String(open));
    toggle.setAttribute("aria-label", `${key === undefined ? "root" : String(key)}: ${open ? "collapse" : "expand"}`);
  };
  toggle.addEventListener("click", () => set(toggle.getAttribute("aria-expanded") !== "true"));
  set(o.openAll || depth < OPEN_DEPTH);
  return li;
}

/** The tree of `value`, with its expand/collapse-all bar. */
export function jsonTree(value: unknown): HTMLElement {
  const openAll = nodeCount(value) <= OPEN_ALL;
  const root = h("ul", { class: "j-tree", "data-testid": "json-tree" }, node(undefined, value, "", 0, { openAll }));
  const setAll = (open: boolean) => {
    // Opening everything draws the children first, level by level.
    for (let more = true; more; ) {
      more = false;
      for (const t of root.querySelectorAll<HTMLButtonElement>(".j-toggle")) {
        if ((t.getAttribute("aria-expanded") === "true") !== open) {
          t.click();
          more = open;
        }
      }
    }
  };
  return h(
    "div",
    { class: "json" },
    h(
      "div",
      { class: "row tools" },
      h("button", { type: "button", class: "btn small", "data-testid": "expand-all", onclick: () => setAll(true) }, "Expand all"),
      h("button", { type: "button", class: "btn small", "data-testid": "collapse-all", onclick: () => setAll(false) }, "Collapse all"),
    ),
    root,
  );
}
