import { describe, it, expect, afterEach } from "vitest";
import { readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { tempDir } from "@whc/testing";
import { cursorFile, stateDir } from "./cursor-file.js";

const dirs: ReturnType<typeof tempDir>[] = [];
const dir = () => {
  const d = tempDir("whc-cursor-");
  dirs.push(d);
  return d.path;
};
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

const ENDPOINT = "0190b6a0-0000-7000-8000-0000000000aa";
const cursor = { at: "2026-11-23T10:00:00.123Z", id: "0190b6a0-0000-7000-8000-000000000001" };

describe("the cursor file of whc listen", () => {
  it("lives in $XDG_STATE_HOME/whc, else ~/.local/state/whc", () => {
    expect(stateDir({ XDG_STATE_HOME: "/x/state", HOME: "/users/u" })).toBe("/x/state/whc");
    expect(stateDir({ HOME: "/users/u" })).toBe("/users/u/.local/state/whc");
    expect(stateDir({ XDG_STATE_HOME: "relative", HOME: "/users/u" })).toBe("/users/u/.local/state/whc");
  });

  it("reads nothing before the first write, then what was written last, creating its folder", async () => {
    const where = path.join(dir(), "whc");
    const file = cursorFile(where, "http://127.0.0.1:8080", ENDPOINT);
    expect(await file.read()).toBeUndefined();
    await file.write(cursor);
    await file.write({ ...cursor, id: "0190b6a0-0000-7000-8000-000000000002" });
    expect(await file.read()).toEqual({ ...cursor, id: "0190b6a0-0000-7000-8000-000000000002" });
    expect(readdirSync(where)).toEqual([path.basename(file.path)]);
  });

  it("is one file per API and endpoint", async () => {
    const where = dir();
    await cursorFile(where, "http://127.0.0.1:8080", ENDPOINT).write(cursor);
    expect(await cursorFile(where, "http://127.0.0.1:9090", ENDPOINT).read()).toBeUndefined();
    expect(await cursorFile(where, "http://127.0.0.1:8080", "0190b6a0-0000-7000-8000-0000000000bb").read()).toBeUndefined();
    expect(await cursorFile(where, "http://127.0.0.1:8080", ENDPOINT).read()).toEqual(cursor);
  });

  it("reads a damaged file as no cursor", async () => {
    const file = cursorFile(dir(), "http://127.0.0.1:8080", ENDPOINT);
    await file.write(cursor);
    writeFileSync(file.path, '{"at": "not a time", "id": 3}');
    expect(await file.read()).toBeUndefined();
    writeFileSync(file.path, "{");
    expect(await file.read()).toBeUndefined();
  });
});
