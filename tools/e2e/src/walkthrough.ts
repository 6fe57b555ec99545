import { expect } from "vitest";
import type { ApiClient } from "@whc/testing";

/** Several gateways and ingests of one deployment: each step goes to the next one in turn. */
export interface Replicated {
  apis: ApiClient[];
  /** Origins of the ingests (the webhookUrl's origin is the first). */
  ingestUrls: string[];
}

/**
 * The README's curl walkthrough, step by step over HTTP: create an endpoint, send a
 * webhook to its webhookUrl, list, read, make it answer 503, 503, 200, delete. Returns what a
 * later check may need. With `replicas`, the steps go round the gateways and ingests, so an
 * endpoint created or changed through one gateway is captured by every ingest, and what one
 * ingest captured is read through another gateway.
 */
export async function walkReadmePath(api: ApiClient, replicas?: Replicated) {
  const apis = replicas?.apis ?? [api];
  let step = 0;
  const next = () => apis[step++ % apis.length]!;

  const created = await next().post("/v1/endpoints", { slug: "github-main", displayName: "GitHub main" });
  expect(created.status).toBe(201);
  const endpoint = created.body as { id: string; webhookUrl: string };
  const ingests = replicas?.ingestUrls ?? [new URL(endpoint.webhookUrl).origin];
  /** The webhookUrl as the i-th ingest serves it. */
  const hook = (i: number) => `${ingests[i % ingests.length]}${new URL(endpoint.webhookUrl).pathname}`;

  const payload = JSON.stringify({ action: "opened", number: 7, note: "zebracorn body word" });
  const sent = await fetch(`${hook(ingests.length - 1)}/ci?source=e2e`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-github-event": "pull_request" },
    body: payload,
  });
  expect(sent.status).toBe(200);
  const ack = (await sent.json()) as { ok: boolean; id: string };
  expect(ack.ok).toBe(true);

  const list = await next().get(`/v1/endpoints/${endpoint.id}/events?limit=10`);
  expect(list.status).toBe(200);
  expect(list.body.items.map((e: { id: string }) => e.id)).toEqual([ack.id]);

  const detail = await next().get(`/v1/endpoints/${endpoint.id}/events/${ack.id}`);
  expect(detail.status).toBe(200);
  expect(detail.body.body).toBe(payload);
  expect(detail.body.decryption).toBe("ok");

  const sequence = { response: { sequence: [{ status: 503 }, { status: 503 }, { status: 200 }] } };
  expect((await apis[0]!.call("PATCH", `/v1/endpoints/${endpoint.id}`, { json: sequence })).status).toBe(200);
  // Every ingest sees the change within a second (distributed: its cached lookup is dropped by
  // a NATS notice, whichever gateway and catalog made the change); a capture it answers before
  // that gets the old 200 and does not move the sequence. Each sender's answer is kept: the
  // list must show exactly them, newest first.
  const answered: number[] = [];
  const post = async (i: number) => {
    const status = (await fetch(hook(i), { method: "POST", body: "retry" })).status;
    answered.push(status);
    return status;
  };
  const firstChanged = async (i: number) => {
    const deadline = Date.now() + 1000;
    let status = await post(i);
    while (status === 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      status = await post(i);
    }
    return status;
  };
  const retries: number[] = [];
  for (let i = 0; i < Math.min(ingests.length, 3); i += 1) retries.push(await firstChanged(i));
  while (retries.length < 3) retries.push(await post(retries.length));
  expect(retries).toEqual([503, 503, 200]);

  expect((await next().delete(`/v1/endpoints/${endpoint.id}/events/${ack.id}`)).status).toBe(204);
  const left = (await next().get(`/v1/endpoints/${endpoint.id}/events`)).body.items.map((e: { responseCode: number }) => e.responseCode);
  expect(left).toEqual([...answered].reverse());
  expect((await next().delete(`/v1/endpoints/${endpoint.id}`)).status).toBe(204);
  for (const client of apis) expect((await client.get(`/v1/endpoints/${endpoint.id}`)).status).toBe(404);
  return { endpoint, eventId: ack.id };
}
