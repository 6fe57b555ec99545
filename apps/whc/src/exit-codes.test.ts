import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import { ApiError } from "@whc/api-model";
import { AppError } from "@whc/errors";
import { WORKSPACE_ROOT } from "@whc/testing";
import { CliError, EXIT_CODES, exitCodeOf, exitCodesHelp } from "./exit-codes.js";

const api = (status: number, code = String(status)) => new ApiError(status, code, "m", "r");

describe("exit codes", () => {
  it("map each kind of failure to its code", () => {
    expect([api(0, "unreachable"), api(500), api(502), api(503)].map(exitCodeOf)).toEqual([4, 4, 4, 4]);
    expect([api(401), new ApiError(0, "no_api_key", "m", "")].map(exitCodeOf)).toEqual([3, 3]);
    expect(exitCodeOf(api(404))).toBe(2);
    expect([api(403), api(429)].map(exitCodeOf)).toEqual([5, 5]);
    expect([api(400), api(409), api(413), new Error("x")].map(exitCodeOf)).toEqual([1, 1, 1, 1]);
    expect(exitCodeOf(new CliError("gone", "notFound"))).toBe(2);
    expect(exitCodeOf(new AppError("not_found", "key"))).toBe(2);
    expect(exitCodeOf(new AppError("service_unavailable", "down"))).toBe(4);
  });

  it("are documented in docs/cli.md as the help epilogue prints them", () => {
    const doc = readFileSync(`${WORKSPACE_ROOT}/docs/cli.md`, "utf8");
    const rows = [...doc.matchAll(/^\| (\d+) \| (.+) \|$/gm)].map((m) => [Number(m[1]), m[2]]);
    expect(rows).toEqual(Object.values(EXIT_CODES).map(({ code, meaning }) => [code, meaning]));
    const help = exitCodesHelp();
    expect(Math.max(...help.split("\n").map((l) => l.length))).toBeLessThanOrEqual(80);
    for (const { code, meaning } of Object.values(EXIT_CODES)) expect(help.replace(/\n {7}(?=\S)/g, " ")).toContain(`${String(code).padStart(3)}  ${meaning}`);
  });
});
