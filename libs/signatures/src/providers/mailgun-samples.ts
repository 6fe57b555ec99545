import { hmac } from "../crypto.js";
import { jsonRequest, type JsonValue, type ProviderSamples, type SampleBody } from "../sample.js";

type JsonObject = { [key: string]: JsonValue };
const isObject = (v: JsonValue | undefined): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Mailgun signs in the body (documentation.mailgun.com, "Securing webhooks"): signature.signature
 * is the hex HMAC-SHA256 of signature.timestamp followed by signature.token, so it is written
 * after any `set` and over the timestamp and token the body then carries.
 */
function signBody(body: SampleBody, secret: Uint8Array): SampleBody {
  if (!("json" in body) || !isObject(body.json) || !isObject(body.json.signature)) return body;
  const { timestamp, token } = body.json.signature;
  const signature = hmac("sha256", secret, `${String(timestamp)}${String(token)}`).toString("hex");
  return { json: { ...body.json, signature: { ...body.json.signature, signature } } };
}

export const mailgunSamples: ProviderSamples = {
  samples: [
    {
      eventType: "delivered",
      build: (ctx) =>
        jsonRequest([["User-Agent", "mailgun/treq-16.12.0"]], {
          signature: { timestamp: String(ctx.unix), token: ctx.id("", 50, "hex"), signature: "" },
          "event-data": {
            id: ctx.id("", 22),
            timestamp: ctx.nowMs / 1000,
            "log-level": "info",
            event: "delivered",
            recipient: "alice@example.com",
            "recipient-domain": "example.com",
            envelope: { transport: "smtp", sender: "bob@mg.example.com", "sending-ip": "209.61.154.250", targets: "alice@example.com" },
            message: { headers: { to: "Alice <alice@example.com>", "message-id": `${ctx.id("", 20)}@mg.example.com`, from: "Bob <bob@mg.example.com>", subject: "Your invoice is ready" }, size: 2048 },
            "delivery-status": { tls: true, code: 250, description: "", message: "OK", "attempt-no": 1, "session-seconds": 0.42 },
            flags: { "is-authenticated": true, "is-test-mode": false },
            tags: ["billing"],
            "user-variables": {},
          },
        }),
    },
  ],
  signBody,
};
