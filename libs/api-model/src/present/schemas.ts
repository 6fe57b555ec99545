import type { Schema, SchemaPath } from "@whc/contracts";
import { JSON_TYPES, type JsonSchemaDocument, type JsonType, type SchemaSummaryJson } from "../index.js";
import { isoTime } from "./json.js";

/** A learned schema (design §19) as `GET .../schemas` lists it. */
export function schemaSummaryJson(s: Schema): SchemaSummaryJson {
  const samples = Number(s.samples);
  return {
    eventType: s.eventType,
    samples,
    firstSeenAt: isoTime(s.firstSeenAtMs),
    lastSeenAt: isoTime(s.lastSeenAtMs),
    fields: s.paths.map((p) => ({
      path: p.path,
      types: knownTypes(p.types),
      presentRatio: samples === 0 ? 0 : Math.min(1, Number(p.present) / samples),
    })),
  };
}

function knownTypes(types: readonly string[]): JsonType[] {
  return JSON_TYPES.filter((t) => types.includes(t));
}

/** A path's place in the learned tree: members by segment, an array's elements apart. */
interface Node {
  types: JsonType[];
  present: number;
  members: Map<string, Node>;
  elements: Node | undefined;
}

const newNode = (): Node => ({ types: [], present: 0, members: new Map(), elements: undefined });

/** The tree of the learned paths: `data.object.lines[].id` is data > object > lines > [] > id. */
function treeOf(paths: readonly SchemaPath[], samples: number): Node {
  const root: Node = { ...newNode(), types: ["object"], present: samples };
  for (const p of paths) {
    let node = root;
    for (const part of p.path.split(".")) {
      let name = part;
      let elements = 0;
      while (name.endsWith("[]")) {
        name = name.slice(0, -2);
        elements += 1;
      }
      let member = node.members.get(name);
      if (!member) node.members.set(name, (member = newNode()));
      node = member;
      for (let i = 0; i < elements; i += 1) node = node.elements ??= newNode();
    }
    node.types = knownTypes(p.types);
    node.present = Number(p.present);
  }
  return root;
}

type JsonSchema = Record<string, unknown>;

/**
 * A node's JSON Schema. A member is `required` where it was present every time its object was,
 * outside arrays (an element's presence is counted per capture, not per element). Keys that
 * looked like data (`*`) describe `additionalProperties` of an object that has no named member;
 * otherwise other keys stay allowed, so every learned sample validates.
 */
function schemaOf(node: Node, inArray: boolean): JsonSchema {
  const out: JsonSchema = {};
  if (node.types.length === 1) out.type = node.types[0];
  else if (node.types.length > 1) out.type = [...node.types];
  const named = [...node.members].filter(([name]) => name !== "*");
  if (named.length > 0) {
    out.properties = Object.fromEntries(named.map(([name, member]) => [name, schemaOf(member, inArray)]));
    const required = inArray ? [] : named.filter(([, member]) => member.present > 0 && member.present >= node.present).map(([name]) => name);
    if (required.length > 0) out.required = required;
  } else {
    const any = node.members.get("*");
    if (any) out.additionalProperties = schemaOf(any, true);
  }
  if (node.elements) out.items = schemaOf(node.elements, true);
  return out;
}

/**
 * What was learned of an endpoint's event type as a JSON Schema (draft 2020-12): types at
 * each path, `required` where a member was always there. It describes the shape only: no
 * value, no format, no enum was ever stored. Every sample learned validates against it.
 */
export function schemaJsonSchema(s: Schema, endpointSlug: string): JsonSchemaDocument {
  const samples = Number(s.samples);
  const { type: _type, ...body } = schemaOf(treeOf(s.paths, samples), false);
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: `${s.eventType} on ${endpointSlug}`,
    description: `Learned from ${samples} JSON bodies received between ${isoTime(s.firstSeenAtMs)} and ${isoTime(s.lastSeenAtMs)}.`,
    type: "object",
    ...body,
  };
}
