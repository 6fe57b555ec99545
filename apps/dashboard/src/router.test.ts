import { describe, it, expect } from "vitest";
import { formatRoute, HOME, parseRoute, withQuery } from "./router.js";

const EP = "0194b1c2-7d3e-7a00-8000-000000000001";
const EV = "0194b1c2-7d3e-7a00-8000-0000000000ff";

describe("the dashboard's hash routes", () => {
  it("reads every kind of view from the address", () => {
    expect(parseRoute("")).toEqual(HOME);
    expect(parseRoute("#/")).toEqual(HOME);
    expect(parseRoute("#/new")).toEqual({ ...HOME, page: "new" });
    expect(parseRoute(`#/endpoints/${EP}`)).toEqual({ page: "", endpointId: EP, tab: "", eventTab: "", query: {} });
    expect(parseRoute(`#/endpoints/${EP}/charts`)).toMatchObject({ endpointId: EP, tab: "charts" });
    expect(parseRoute(`#/endpoints/${EP}/events/${EV}/headers?q=refund%20paid&status=failed&view=`)).toEqual({
      page: "",
      endpointId: EP,
      tab: "events",
      eventId: EV,
      eventTab: "headers",
      query: { q: "refund paid", status: "failed" },
    });
  });

  it("writes what it reads: a link round-trips", () => {
    for (const hash of ["#/", "#/new", `#/endpoints/${EP}`, `#/endpoints/${EP}/settings`, `#/endpoints/${EP}/events/${EV}`, `#/endpoints/${EP}/events/${EV}/body?view=hex&q=a+b`]) {
      expect(formatRoute(parseRoute(hash))).toBe(hash);
    }
    expect(formatRoute({ endpointId: "a/b", query: { q: "x&y" } })).toBe("#/endpoints/a%2Fb?q=x%26y");
    expect(parseRoute(formatRoute({ endpointId: "a/b" })).endpointId).toBe("a/b");
  });

  it("changes query values, removing emptied ones", () => {
    expect(withQuery({ q: "a", view: "hex" }, { q: "", status: "failed" })).toEqual({ view: "hex", status: "failed" });
  });
});
