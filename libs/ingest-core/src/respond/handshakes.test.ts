import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { findHandshake, HANDSHAKE_NAMES, HANDSHAKES, MAX_REFLECTED_BYTES, type HandshakeRequest } from "./handshakes.js";
import type { RenderedAnswer } from "./answer-types.js";

/*
 * None of the providers' SDKs that handle these handshakes (@slack/bolt, @zoom/rivet,
 * twitter-api-v2...) is installed here, so each answer is checked against the examples the
 * provider's documentation publishes (known token, known answer) and against the documented
 * algorithm recomputed independently (node:crypto here, `openssl dgst` for the literals).
 */

const secretOf = (text: string) => new Uint8Array(Buffer.from(text, "utf8"));
const text = (answer: RenderedAnswer) => Buffer.from(answer.body).toString("utf8");
const headerOf = (answer: RenderedAnswer, name: string) => answer.headers.find(([n]) => n.toLowerCase() === name)?.[1];

function request(partial: Omit<Partial<HandshakeRequest>, "body"> & { body?: Uint8Array | string }): HandshakeRequest {
  const body = typeof partial.body === "string" ? new Uint8Array(Buffer.from(partial.body)) : (partial.body ?? new Uint8Array(0));
  return { method: partial.method ?? "POST", path: partial.path ?? "", headers: partial.headers ?? [], body };
}

describe("the handshake table", () => {
  it("has one entry per name, in the documented order, each naming its source", () => {
    expect(HANDSHAKES.map((h) => h.name)).toEqual([...HANDSHAKE_NAMES]);
    for (const h of HANDSHAKES) expect(h.documentedAt).toMatch(/^https:\/\//);
  });

  it("asks for a secret exactly where the provider's answer depends on one", () => {
    expect(HANDSHAKES.filter((h) => h.needsSecret).map((h) => h.name)).toEqual(["zoom_url_validation", "meta_verify_token", "x_crc"]);
  });

  it("leaves an ordinary capture alone", () => {
    expect(findHandshake(request({ body: '{"type":"invoice.paid"}', path: "/orders?id=1" }), secretOf("s"))).toBeUndefined();
    expect(findHandshake(request({ method: "GET", path: "" }), secretOf("s"))).toBeUndefined();
  });
});

describe("slack_url_verification", () => {
  // The payload and challenge shown on https://api.slack.com/events/url_verification.
  const challenge = "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P";
  const body = `{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"${challenge}","type":"url_verification"}`;

  it("answers 200 with the challenge as JSON, with or without a secret", () => {
    for (const secret of [undefined, secretOf("signing")]) {
      const found = findHandshake(request({ body }), secret);
      expect(found?.name).toBe("slack_url_verification");
      expect(found?.answer.status).toBe(200);
      expect(JSON.parse(text(found!.answer))).toEqual({ challenge });
      expect(headerOf(found!.answer, "content-type")).toBe("application/json");
    }
  });

  it("is not another Slack event, nor a GET, nor an overlong challenge", () => {
    expect(findHandshake(request({ body: '{"type":"event_callback","challenge":"x"}' }), undefined)).toBeUndefined();
    expect(findHandshake(request({ method: "GET", body }), undefined)).toBeUndefined();
    const long = "a".repeat(MAX_REFLECTED_BYTES + 1);
    expect(findHandshake(request({ body: `{"type":"url_verification","challenge":"${long}"}` }), undefined)).toBeUndefined();
  });
});

describe("zoom_url_validation", () => {
  // plainToken from Zoom's example; Zoom publishes no secret, so this one is ours, and the
  // literal digest was computed with `openssl dgst -sha256 -hmac zoom-secret-token-example`.
  const plainToken = "qgg8vlvZRS6UYooatFL8Aw";
  const secret = secretOf("zoom-secret-token-example");
  const body = JSON.stringify({ payload: { plainToken }, event_ts: 1654503849680, event: "endpoint.url_validation" });

  it("answers 200 JSON with plainToken and the hex HMAC-SHA256 of it keyed with the secret", () => {
    const found = findHandshake(request({ body }), secret);
    expect(found?.name).toBe("zoom_url_validation");
    expect(found?.answer.status).toBe(200);
    expect(headerOf(found!.answer, "content-type")).toBe("application/json");
    const answer = JSON.parse(text(found!.answer)) as Record<string, string>;
    expect(Object.keys(answer)).toEqual(["plainToken", "encryptedToken"]);
    expect(answer["plainToken"]).toBe(plainToken);
    expect(answer["encryptedToken"]).toBe("02b388957bd75494d35ec1658be6692dcda1d75201c34a5b7fbc48a7a2e59fc3");
    expect(answer["encryptedToken"]).toBe(createHmac("sha256", "zoom-secret-token-example").update(plainToken).digest("hex"));
  });

  it("is skipped without a secret (an empty one too): answered like any other request", () => {
    expect(findHandshake(request({ body }), undefined)).toBeUndefined();
    expect(findHandshake(request({ body }), new Uint8Array(0))).toBeUndefined();
  });

  it("needs the documented shape", () => {
    const variants = [
      JSON.stringify({ event: "meeting.started", payload: { plainToken } }),
      JSON.stringify({ event: "endpoint.url_validation", payload: { plainToken: 42 } }),
      JSON.stringify({ event: "endpoint.url_validation", plainToken }),
      JSON.stringify({ event: "endpoint.url_validation", payload: { plainToken: "t".repeat(MAX_REFLECTED_BYTES + 1) } }),
      '{"__proto__":{"event":"endpoint.url_validation","payload":{"plainToken":"p"}}}',
      '{"event":"endpoint.url_validation", "payload": ',
    ];
    for (const variant of variants) expect(findHandshake(request({ body: variant }), secret)).toBeUndefined();
    expect(findHandshake(request({ method: "GET", body }), secret)).toBeUndefined();
  });
});

describe("asana_hook_secret", () => {
  // The handshake shown on https://developers.asana.com/reference/createwebhook.
  const hookSecret = "b537207f20cbfa02357cf448134da559e8bd39d61597dcd5631b8012eae53e81";

  it("answers 200 echoing X-Hook-Secret as a response header", () => {
    const found = findHandshake(request({ path: "/receive-webhook/7654", headers: [["X-Hook-Secret", hookSecret]] }), undefined);
    expect(found?.name).toBe("asana_hook_secret");
    expect(found?.answer.status).toBe(200);
    expect(found?.answer.headers).toEqual([["X-Hook-Secret", hookSecret]]);
    expect(found?.answer.body.length).toBe(0);
  });

  it("is not a handshake when the value could not be a header value as it is", () => {
    for (const bad of ["a\r\nSet-Cookie: x", "a\nb", "nul\0", "tab\there", "café", "", " ", "x".repeat(MAX_REFLECTED_BYTES + 1)]) {
      expect(findHandshake(request({ headers: [["x-hook-secret", bad]] }), undefined)).toBeUndefined();
    }
  });
});

describe("meta_verify_token", () => {
  // The query of the verification request on Meta's "Getting started" page for Webhooks.
  const path = "/?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=meatyhamhock";
  const secret = secretOf("meatyhamhock");

  it("answers 200 with hub.challenge when hub.verify_token is the endpoint's secret", () => {
    const found = findHandshake(request({ method: "GET", path }), secret);
    expect(found?.name).toBe("meta_verify_token");
    expect(found?.answer.status).toBe(200);
    expect(text(found!.answer)).toBe("1158201444");
  });

  it("answers 403 to a wrong or missing verify token, still as the handshake", () => {
    for (const wrong of [path.replace("meatyhamhock", "meatyhamhoc"), "?hub.mode=subscribe&hub.challenge=1"]) {
      const found = findHandshake(request({ method: "GET", path: wrong }), secret);
      expect(found?.name).toBe("meta_verify_token");
      expect(found?.answer.status).toBe(403);
      expect(text(found!.answer)).not.toContain("1158201444");
    }
  });

  it("compares the URL-decoded token", () => {
    const found = findHandshake(request({ method: "GET", path: "?hub.mode=subscribe&hub.challenge=9&hub.verify_token=a%20b%26c" }), secretOf("a b&c"));
    expect(found?.answer.status).toBe(200);
  });

  it("is skipped without a secret, and is only a GET subscribe with a challenge", () => {
    expect(findHandshake(request({ method: "GET", path }), undefined)).toBeUndefined();
    expect(findHandshake(request({ method: "POST", path }), secret)).toBeUndefined();
    expect(findHandshake(request({ method: "GET", path: path.replace("subscribe", "unsubscribe") }), secret)).toBeUndefined();
    expect(findHandshake(request({ method: "GET", path: "?hub.mode=subscribe&hub.verify_token=meatyhamhock" }), secret)).toBeUndefined();
  });
});

describe("x_crc", () => {
  // Consumer secret and crc_token from X's developer-relations CRC example; the literal
  // answer computed with `openssl dgst -sha256 -hmac ... -binary | base64`.
  const consumerSecret = "z3ZX4v7mAAUGykl3EcmkqbartmuW8VFOOzCloLx9Q45P0hLrFu";
  const token = "9b4507b3-9040-4669-9ca3-6b94edb50553";

  it('answers 200 JSON {"response_token": "sha256=" + base64 HMAC-SHA256(secret, crc_token)}', () => {
    const found = findHandshake(request({ method: "GET", path: `/twitter?crc_token=${token}&nonce=1` }), secretOf(consumerSecret));
    expect(found?.name).toBe("x_crc");
    expect(found?.answer.status).toBe(200);
    expect(headerOf(found!.answer, "content-type")).toBe("application/json");
    expect(JSON.parse(text(found!.answer))).toEqual({ response_token: "sha256=Cytd4Sq+NvEcV3MMrXxWJGJx5A+y/lXzzU2Maartkx8=" });
    const recomputed = createHmac("sha256", consumerSecret).update(token).digest("base64");
    expect(JSON.parse(text(found!.answer))).toEqual({ response_token: `sha256=${recomputed}` });
  });

  it("is skipped without a secret, and is only a GET", () => {
    expect(findHandshake(request({ method: "GET", path: `?crc_token=${token}` }), undefined)).toBeUndefined();
    expect(findHandshake(request({ method: "POST", path: `?crc_token=${token}` }), secretOf(consumerSecret))).toBeUndefined();
  });
});

describe("graph_validation_token", () => {
  const decoded = "Validation: Testing client application reachability for subscription Request-Id: 522a8e7e-096a-494c-aaf1-ac0dcfca45b7";

  it("answers 200 text/plain with the URL-decoded token, to Graph's POST and to any other method", () => {
    for (const method of ["POST", "GET"]) {
      const found = findHandshake(request({ method, path: `/graph?validationToken=${encodeURIComponent(decoded)}` }), undefined);
      expect(found?.name).toBe("graph_validation_token");
      expect(found?.answer.status).toBe(200);
      expect(headerOf(found!.answer, "content-type")).toMatch(/^text\/plain/);
      expect(text(found!.answer)).toBe(decoded);
    }
  });

  it("decodes form-style + as a space, as Graph's own samples' frameworks do", () => {
    const found = findHandshake(request({ path: "?validationToken=a+b%2Bc" }), undefined);
    expect(text(found!.answer)).toBe("a b+c");
  });
});

describe("dropbox_challenge", () => {
  it("answers 200 text/plain with the challenge and X-Content-Type-Options: nosniff", () => {
    // https://www.example.com/dropbox-webhook?challenge=abc123 is Dropbox's own example.
    const found = findHandshake(request({ method: "GET", path: "/dropbox-webhook?challenge=abc123" }), undefined);
    expect(found?.name).toBe("dropbox_challenge");
    expect(found?.answer).toEqual({
      status: 200,
      headers: [
        ["content-type", "text/plain; charset=utf-8"],
        ["x-content-type-options", "nosniff"],
      ],
      body: new Uint8Array(Buffer.from("abc123")),
      delayMs: 0,
    });
  });

  it("limits what it reflects to 1 KiB of UTF-8, and to GET", () => {
    const at = (challenge: string, method = "GET") => findHandshake(request({ method, path: `?challenge=${encodeURIComponent(challenge)}` }), undefined);
    expect(at("a".repeat(MAX_REFLECTED_BYTES))?.name).toBe("dropbox_challenge");
    expect(at("a".repeat(MAX_REFLECTED_BYTES + 1))).toBeUndefined();
    expect(at("é".repeat(MAX_REFLECTED_BYTES / 2 + 1))).toBeUndefined();
    expect(at("")).toBeUndefined();
    expect(at("abc", "POST")).toBeUndefined();
  });
});
