import { expect } from "vitest";
import type { ApiClient } from "@whc/testing";

/**
 * The README's curl walkthrough, step by step over HTTP: create an endpoint, send a
 * webhook to its webhookUrl, list, read, make it answer 503, 503, 200, delete. Returns what a
 * later check may need.
 */
export async function walkReadmePath(api: ApiClient) {
  const created = await api.post("/v1/endpoints", { slug: "github-main", displayName: "GitHub main" });
  expect(created.status).toBe(201);
  const endpoint = created.body as { id: string; webhookUrl: string };

  const payload = JSON.stringify({ action: "opened", number: 7, note: "zebracorn body word" });
  const sent = await fetch(`${endpoint.webhookUrl}/ci?source=e2e`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-github-event": "pull_request" },
    body: payload,
  });
  expect(sent.status).toBe(200);
  const ack = (await sent.json()) as { ok: boolean; id: string };
  expect(ack.ok).toBe(true);

  const list = await api.get(`/v1/endpoints/${endpoint.id}/events?limit=10`);
  expect(list.status).toBe(200);
  expect(list.body.items.map((e: { id: string }) => e.id)).toEqual([ack.id]);

  const detail = await api.get(`/v1/endpoints/${endpoint.id}/events/${ack.id}`);
  expect(detail.status).toBe(200);
  expect(detail.body.body).toBe(payload);
  expect(detail.body.decryption).toBe("ok");

  const sequence = { response: { sequence: [{ status: 503 }, { status: 503 }, { status: 200 }] } };
  expect((await api.call("PATCH", `/v1/endpoints/${endpoint.id}`, { json: sequence })).status).toBe(200);
  // Ingest sees the change within a second (distributed: its cached lookup is dropped by a NATS
  // notice); a capture it answers before that gets the old 200 and does not move the sequence.
  const post = async () => (await fetch(endpoint.webhookUrl, { method: "POST", body: "retry" })).status;
  const deadline = Date.now() + 1000;
  let first = await post();
  while (first === 200 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    first = await post();
  }
  const retries = [first, await post(), await post()];
  expect(retries).toEqual([503, 503, 200]);

  expect((await api.delete(`/v1/endpoints/${endpoint.id}/events/${ack.id}`)).status).toBe(204);
  const left = (await api.get(`/v1/endpoints/${endpoint.id}/events`)).body.items.map((e: { responseCode: number }) => e.responseCode);
  expect(left.slice(0, 3)).toEqual([200, 503, 503]);
  expect(left.slice(3).every((code: number) => code === 200)).toBe(true);
  expect((await api.delete(`/v1/endpoints/${endpoint.id}`)).status).toBe(204);
  expect((await api.get(`/v1/endpoints/${endpoint.id}`)).status).toBe(404);
  return { endpoint, eventId: ack.id };
}
