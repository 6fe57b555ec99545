import { bitbucket } from "./providers/bitbucket.js";
import { calendly } from "./providers/calendly.js";
import { discord } from "./providers/discord.js";
import { generic } from "./providers/generic.js";
import { github } from "./providers/github.js";
import { hubspot } from "./providers/hubspot.js";
import { intercom } from "./providers/intercom.js";
import { gitlab } from "./providers/gitlab.js";
import { linear } from "./providers/linear.js";
import { mailgun } from "./providers/mailgun.js";
import { paddle } from "./providers/paddle.js";
import { sendgrid } from "./providers/sendgrid.js";
import { shopify } from "./providers/shopify.js";
import { slack } from "./providers/slack.js";
import { square } from "./providers/square.js";
import { standardWebhooks } from "./providers/standard-webhooks.js";
import { stripe } from "./providers/stripe.js";
import { twilio } from "./providers/twilio.js";
import { twitch } from "./providers/twitch.js";
import { zoom } from "./providers/zoom.js";
import { clerk } from "./providers/clerk.js";
import { coinbaseCommerce } from "./providers/coinbase-commerce.js";
import { lemonSqueezy } from "./providers/lemon-squeezy.js";
import { meta } from "./providers/meta.js";
import { resend } from "./providers/resend.js";
import { sentry } from "./providers/sentry.js";
import { vercel } from "./providers/vercel.js";
import { woocommerce } from "./providers/woocommerce.js";
import { typeform } from "./providers/typeform.js";
import { stripeSamples } from "./providers/stripe-samples.js";
import { metaSamples } from "./providers/meta-samples.js";
import { githubSamples } from "./providers/github-samples.js";
import { gitlabSamples } from "./providers/gitlab-samples.js";
import { bitbucketSamples } from "./providers/bitbucket-samples.js";
import { linearSamples } from "./providers/linear-samples.js";
import { intercomSamples } from "./providers/intercom-samples.js";
import { typeformSamples } from "./providers/typeform-samples.js";
import { calendlySamples } from "./providers/calendly-samples.js";
import { hubspotSamples } from "./providers/hubspot-samples.js";
import { slackSamples } from "./providers/slack-samples.js";
import { shopifySamples } from "./providers/shopify-samples.js";
import { zoomSamples } from "./providers/zoom-samples.js";
import { twitchSamples } from "./providers/twitch-samples.js";
import { vercelSamples } from "./providers/vercel-samples.js";
import { sentrySamples } from "./providers/sentry-samples.js";
import { lemonSqueezySamples } from "./providers/lemon-squeezy-samples.js";
import { woocommerceSamples } from "./providers/woocommerce-samples.js";
import { coinbaseCommerceSamples } from "./providers/coinbase-commerce-samples.js";
import { twilioSamples } from "./providers/twilio-samples.js";
import { clerkSamples } from "./providers/clerk-samples.js";
import { resendSamples } from "./providers/resend-samples.js";
import { squareSamples } from "./providers/square-samples.js";
import { paddleSamples } from "./providers/paddle-samples.js";
import { discordSamples } from "./providers/discord-samples.js";
import { sendgridSamples } from "./providers/sendgrid-samples.js";
import { mailgunSamples } from "./providers/mailgun-samples.js";
import { standardWebhooksSamples } from "./providers/standard-webhooks-samples.js";
import type { ProviderSamples } from "./sample.js";
import type { ProviderScheme, SecretFormat } from "./scheme.js";
import type { HeaderPair } from "./headers.js";

/**
 * Every provider, once. Detection tries them in this order and the first whose headers are
 * present wins: a provider that also sends another's headers (one built on Standard Webhooks,
 * say) must come before that one, or it is never detected.
 */
export const providers = Object.freeze({
  generic,
  stripe,
  // Before github: its detection needs Meta's user agent and no X-GitHub-Event, while github's claims any X-Hub-Signature-256.
  meta,
  github,
  gitlab,
  bitbucket,
  linear,
  intercom,
  typeform,
  calendly,
  hubspot,
  slack,
  shopify,
  zoom,
  twitch,
  vercel,
  sentry,
  lemon_squeezy: lemonSqueezy,
  woocommerce,
  coinbase_commerce: coinbaseCommerce,
  twilio,
  clerk,
  resend,
  square,
  paddle,
  discord,
  sendgrid,
  // Never detected (no header of its own); configured on the endpoint.
  mailgun,
  standard_webhooks: standardWebhooks,
} satisfies Record<string, ProviderScheme>);

export type Provider = keyof typeof providers;

/**
 * Every provider's sample events (`POST /v1/endpoints/{id}/trigger`, `whc trigger`), each in
 * providers/<name>-samples.ts beside its scheme. Generic has none: it has no payload of its own.
 */
export const providerSamples = Object.freeze({
  generic: { samples: [] } as ProviderSamples,
  stripe: stripeSamples,
  meta: metaSamples,
  github: githubSamples,
  gitlab: gitlabSamples,
  bitbucket: bitbucketSamples,
  linear: linearSamples,
  intercom: intercomSamples,
  typeform: typeformSamples,
  calendly: calendlySamples,
  hubspot: hubspotSamples,
  slack: slackSamples,
  shopify: shopifySamples,
  zoom: zoomSamples,
  twitch: twitchSamples,
  vercel: vercelSamples,
  sentry: sentrySamples,
  lemon_squeezy: lemonSqueezySamples,
  woocommerce: woocommerceSamples,
  coinbase_commerce: coinbaseCommerceSamples,
  twilio: twilioSamples,
  clerk: clerkSamples,
  resend: resendSamples,
  square: squareSamples,
  paddle: paddleSamples,
  discord: discordSamples,
  sendgrid: sendgridSamples,
  mailgun: mailgunSamples,
  standard_webhooks: standardWebhooksSamples,
} satisfies Record<Provider, ProviderSamples>);

/** Registry order; a non-empty tuple, so `z.enum(PROVIDER_NAMES)` accepts it. */
// Object.keys is typed string[]; these are the literal keys above, and generic makes it non-empty.
export const PROVIDER_NAMES = Object.freeze(Object.keys(providers)) as readonly [Provider, ...Provider[]];

/** PROVIDER_NAMES under the name existing callers import. */
export const PROVIDERS = PROVIDER_NAMES;

/** The provider an endpoint has when none is configured; it has no headers of its own to detect. */
const FALLBACK: Provider = "generic";

export const DETECTION_ORDER: readonly Provider[] = Object.freeze(PROVIDER_NAMES.filter((name) => name !== FALLBACK));

/** Throws for a name outside the registry: the type rules that out, so it is a caller's bug. */
export function providerScheme(name: Provider): ProviderScheme {
  if (!Object.hasOwn(providers, name)) throw new TypeError(`unknown signature provider: ${String(name)}`);
  return providers[name];
}

/** One provider as the API and the documentation list it: plain JSON. */
export interface ProviderCatalogEntry {
  name: Provider;
  label: string;
  signs: string;
  signatureHeaders: string[];
  /** Absent, not null, when the scheme signs no timestamp, as optional fields are in the /v1 JSON. */
  toleranceS?: number;
  secretFormat: SecretFormat;
  /** The event types `trigger` can send for it, in its samples' order; [] for generic. */
  sampleEventTypes: string[];
}

export function providerCatalog(): ProviderCatalogEntry[] {
  return PROVIDER_NAMES.map((name) => {
    const scheme = providers[name];
    return {
      name,
      label: scheme.label,
      signs: scheme.signs,
      signatureHeaders: [...scheme.signatureHeaders],
      ...(scheme.toleranceS === undefined ? {} : { toleranceS: scheme.toleranceS }),
      secretFormat: { ...scheme.secretFormat },
      sampleEventTypes: providerSamples[name].samples.map((s) => s.eventType),
    };
  });
}

/**
 * The provider's own delivery or event id in this request (deduplication's `key: "auto"`,
 * design §17): undefined when the provider declares none, or the request lacks it.
 */
export function providerDeliveryId(name: Provider, headers: readonly HeaderPair[], body: Uint8Array): string | undefined {
  return providerScheme(name).deliveryId?.read(headers, body);
}
