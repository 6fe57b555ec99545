import { s } from "./dom.js";

/** The mark: a hook catching a dot, as in the favicon (src/favicon.svg). */
export function logo(): SVGSVGElement {
  return s(
    "svg",
    { class: "logo", viewBox: "0 0 32 32", width: "20", height: "20", "aria-hidden": "true", focusable: "false" },
    s("rect", { width: "32", height: "32", rx: "7", fill: "#0969da" }),
    s("path", { d: "M11 7v11a5 5 0 0 0 10 0v-2", fill: "none", stroke: "#fff", "stroke-width": "3", "stroke-linecap": "round" }),
    s("circle", { cx: "21", cy: "10", r: "3", fill: "#fff" }),
  );
}
