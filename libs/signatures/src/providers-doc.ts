import { providerCatalog, providers } from "./registry.js";

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

/**
 * docs/providers.md, made from the registry: one row per provider. `npm run docs:providers`
 * writes it; a test fails when the file and the registry disagree.
 */
export function providersDoc(): string {
  const rows = providerCatalog().map((p) =>
    [
      `\`${p.name}\``,
      cell(p.label),
      cell(p.signs),
      p.signatureHeaders.map((h) => `\`${h}\``).join(", ") || "-",
      p.toleranceS === undefined ? "-" : `${p.toleranceS} s`,
      cell(p.secretFormat.description) + (p.secretFormat.example ? ` (e.g. \`${cell(p.secretFormat.example)}\`)` : ""),
      p.sampleEventTypes.map((t) => `\`${cell(t)}\``).join(", ") || "-",
      providers[p.name].deliveryId ? cell(providers[p.name].deliveryId!.from) : "-",
    ].join(" | "),
  );
  return [
    "# Signature providers",
    "",
    "Generated from the provider registry (`libs/signatures/src/registry.ts`) by `npm run docs:providers`;",
    "a test fails when this page and the registry disagree. `GET /v1/providers` lists the same.",
    "Set an endpoint's `provider` to one of these names and its `secret` as the last column says; a",
    "`generic` endpoint takes the provider from the capture's headers when they name one.",
    "The last column lists the sample events `POST /v1/endpoints/{id}/trigger` and `whc trigger` send",
    "(signed with the endpoint's secret as the provider signs; docs/api.md, docs/cli.md).",
    "The column `dedupe id` says where the provider puts its own id of a delivery or event, which",
    "deduplication's `key: \"auto\"` reads (docs/api.md, \"Deduplication\"); `-`: it sends none.",
    "",
    "| name | provider | signs | headers | tolerance | secret | sample events | dedupe id |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map((r) => `| ${r} |`),
    "",
  ].join("\n");
}
