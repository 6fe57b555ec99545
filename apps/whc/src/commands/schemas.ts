import type { Command } from "commander";
import type { SchemaSummaryJson } from "@whc/api-model";
import type { Context } from "../context.js";
import { resolveEndpoint } from "../endpoint-ref.js";
import { table } from "../output.js";

function percent(ratio: number): string {
  return ratio >= 1 ? "100 %" : `${(Math.floor(ratio * 1000) / 10).toFixed(1)} %`;
}

function schemaText(s: SchemaSummaryJson): string {
  const head = `${s.eventType}: ${s.samples} sample(s), ${s.firstSeenAt} to ${s.lastSeenAt}`;
  return [head, table([["PATH", "TYPES", "PRESENT"], ...s.fields.map((f) => [f.path, f.types.join("|"), percent(f.presentRatio)])])].join("\n");
}

/**
 * `whc schemas <endpoint> [eventType]` (design §19): what the catalog learned of the endpoint's
 * JSON bodies, per event type; with a type, its JSON Schema (draft 2020-12), always as JSON.
 */
export function schemasCommand(program: Command, ctx: () => Context): void {
  program
    .command("schemas")
    .description("the shapes learned from an endpoint's JSON bodies, per event type; with a type, its JSON Schema (needs scope events:read)")
    .argument("<endpoint>", "endpoint id or slug")
    .argument("[eventType]", "one event type (as events list shows it; * for captures without one): print its JSON Schema")
    .addHelpText(
      "after",
      "\nEach path is dotted (data.object.amount), an array's elements are items[], keys that look like data are *.\n" +
        "PRESENT is the share of the samples that had the path. Captures that depart from this show `schema drift`\n" +
        "in whc events get, and whc events list --drift lists them.",
    )
    .action(async (endpoint: string, eventType: string | undefined) => {
      const { out, api } = ctx();
      const client = api();
      const { id } = await resolveEndpoint(client, endpoint);
      if (eventType !== undefined) {
        const schema = await out.busy("reading the schema", () => client.schemas.get(id, eventType));
        // A JSON Schema is JSON, whatever the output mode: it is meant for validators.
        process.stdout.write(`${JSON.stringify(schema, null, 2)}\n`);
        return;
      }
      const { items } = await out.busy("reading the schemas", () => client.schemas.list(id));
      out.result({ items }, () => (items.length ? items.map(schemaText).join("\n\n") : "nothing learned yet: no JSON object body was captured"));
    });
}
