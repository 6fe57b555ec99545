import {
  ABSENT,
  ANY_EVENT_TYPE,
  JSON_TYPES,
  SCHEMA_LIMITS,
  decodeBodyShape,
  type BodyShape,
  type SchemaDriftChangeJson,
} from "@whc/api-model";
import type { SchemaDriftNotice, SchemaObservation, SchemaPathRecord, SchemaRecord } from "./types.js";

/**
 * Learning schemas and judging drift (design §19; ADR 0090), as pure functions over a schema
 * record: every store runs these inside its own write (a transaction, or a versioned replace),
 * so that any number of catalog processes agree on what was learned and on which capture
 * drifted. A store opens a record once per call, learns each observation of it in order, and
 * writes it back once.
 */

/** The event type a capture is learned under. */
export const schemaEventType = (canonicalEventType: string): string => canonicalEventType || ANY_EVENT_TYPE;

/** A schema being learned: its record with its paths by name. */
export interface LearningSchema {
  record: SchemaRecord;
  byPath: Map<string, SchemaPathRecord>;
}

export function openSchema(record: SchemaRecord): LearningSchema {
  const copy: SchemaRecord = { ...record, paths: record.paths.map((p) => ({ ...p })) };
  return { record: copy, byPath: new Map(copy.paths.map((p) => [p.path, p])) };
}

/** A schema with no sample yet, for the first capture of a type. */
export function newSchema(o: Pick<SchemaObservation, "accountId" | "endpointId" | "eventType" | "receivedAt">): SchemaRecord {
  return {
    accountId: o.accountId,
    endpointId: o.endpointId,
    eventType: o.eventType,
    samples: 0,
    firstSeenAt: o.receivedAt,
    lastSeenAt: o.receivedAt,
    paths: [],
    driftNoticeAt: undefined,
    driftsSinceNotice: 0,
  };
}

const typesOf = (mask: number) => JSON_TYPES.filter((_, i) => mask & (1 << i));

/** The path a path is a member or element of; "" for a top-level one. Segments never hold `.` or `[`. */
export function parentPath(path: string): string {
  if (path.endsWith("[]")) return path.slice(0, -2);
  const dot = path.lastIndexOf(".");
  return dot < 0 ? "" : path.slice(0, dot);
}

/**
 * How the shape departs from what the schema learned, judged once SCHEMA_LIMITS.samplesBeforeDrift
 * samples were learned: a path never seen (`added`, only the outermost of a new subtree, and
 * only while the schema has room to learn it), a type not seen at a path (`type_changed`, one
 * change per new type), a path present in at least SCHEMA_LIMITS.expectedRatio of the samples
 * and absent now (`missing`: only where its parent is present, the outermost of a missing
 * subtree, never an array's elements, since an empty array is a value; never for a partial
 * shape, whose absent paths are unknown). At most SCHEMA_LIMITS.changesPerEvent changes.
 */
export function driftOf(schema: LearningSchema, shape: BodyShape): SchemaDriftChangeJson[] {
  const { record, byPath } = schema;
  if (record.samples < SCHEMA_LIMITS.samplesBeforeDrift) return [];
  const changes: SchemaDriftChangeJson[] = [];
  const room = byPath.size < SCHEMA_LIMITS.pathsPerType;
  const added = new Set<string>();
  for (const [path, mask] of shape.paths) {
    const known = byPath.get(path);
    if (!known) {
      if (room) {
        added.add(path);
        if (!added.has(parentPath(path))) changes.push({ path, change: "added", seen: [], now: typesOf(mask)[0]! });
      }
      continue;
    }
    const fresh = mask & ~known.mask;
    if (fresh !== 0) for (const t of typesOf(fresh)) changes.push({ path, change: "type_changed", seen: typesOf(known.mask), now: t });
  }
  if (!shape.partial) {
    const expected = record.samples * SCHEMA_LIMITS.expectedRatio;
    for (const p of record.paths) {
      if (p.present < expected || shape.paths.has(p.path) || p.path.endsWith("[]")) continue;
      const parent = parentPath(p.path);
      if (parent === "" || shape.paths.has(parent)) changes.push({ path: p.path, change: "missing", seen: typesOf(p.mask), now: ABSENT });
    }
  }
  return changes.slice(0, SCHEMA_LIMITS.changesPerEvent);
}

/** Adds one sample: its paths' presence and types; a path first seen once the schema is full is not learned. */
export function learnShape(schema: LearningSchema, shape: BodyShape, receivedAt: number): void {
  learnSamples(schema, shape, 1, receivedAt, receivedAt);
}

/** learnShape of `times` samples of one shape, received between `firstAt` and `lastAt`. */
function learnSamples(schema: LearningSchema, shape: BodyShape, times: number, firstAt: number, lastAt: number): void {
  const { record, byPath } = schema;
  record.samples += times;
  record.firstSeenAt = Math.min(record.firstSeenAt, firstAt);
  record.lastSeenAt = Math.max(record.lastSeenAt, lastAt);
  for (const [path, mask] of shape.paths) {
    const known = byPath.get(path);
    if (known) {
      known.present += times;
      known.mask |= mask;
    } else if (byPath.size < SCHEMA_LIMITS.pathsPerType) {
      const learned = { path, mask, present: times };
      byPath.set(path, learned);
      record.paths.push(learned);
    }
  }
}

/**
 * One observation: judged against the schema as learned so far, then learned. A drifted
 * capture counts towards the next schema.drift, which is due when none was raised for this
 * type within `noticeIntervalMs` (design §19: coalesced per type per hour). A shape that does
 * not decode is not learned (undefined).
 */
export function observe(
  schema: LearningSchema,
  o: SchemaObservation,
  noticeIntervalMs: number,
  shapes?: Map<string, BodyShape | undefined>,
): { drift: SchemaDriftChangeJson[]; notice: SchemaDriftNotice | undefined } | undefined {
  const shape = decodedShape(o.shape, shapes);
  if (!shape) return undefined;
  const drift = driftOf(schema, shape);
  learnShape(schema, shape, o.receivedAt);
  if (drift.length === 0) return { drift, notice: undefined };
  const { record } = schema;
  record.driftsSinceNotice += 1;
  const last = record.driftNoticeAt;
  if (last !== undefined && o.receivedAt - last < noticeIntervalMs) return { drift, notice: undefined };
  const notice: SchemaDriftNotice = {
    accountId: o.accountId,
    endpointId: o.endpointId,
    eventType: o.eventType,
    eventId: o.eventId,
    changes: drift,
    count: record.driftsSinceNotice,
  };
  record.driftNoticeAt = o.receivedAt;
  record.driftsSinceNotice = 0;
  return { drift, notice };
}

/**
 * A shape decoded once per call: captures of one type mostly share their shape, and decoding
 * its text was most of what learning one cost.
 */
function decodedShape(text: string, shapes: Map<string, BodyShape | undefined> | undefined): BodyShape | undefined {
  if (!shapes) return decodeBodyShape(text);
  if (shapes.has(text)) return shapes.get(text);
  const shape = decodeBodyShape(text);
  shapes.set(text, shape);
  return shape;
}

/** A call's observations by schema (endpoint and event type), each group in its order of arrival. */
export function observationsBySchema(observations: readonly SchemaObservation[]): Map<string, SchemaObservation[]> {
  const groups = new Map<string, SchemaObservation[]>();
  for (const o of observations) {
    const key = schemaKey(o.endpointId, o.eventType);
    const group = groups.get(key);
    if (group) group.push(o);
    else groups.set(key, [o]);
  }
  return groups;
}

/** One schema's key among all endpoints': unambiguous, an endpoint id being a UUID. */
export const schemaKey = (endpointId: string, eventType: string): string => `${endpointId}:${eventType}`;

/** What a store does with one group, after learning it: the drifted events and the notices due. */
export interface LearnedGroup {
  schema: SchemaRecord;
  drifts: { eventId: string; changes: SchemaDriftChangeJson[] }[];
  notices: SchemaDriftNotice[];
}

/** Learns a group of one schema's observations, in order, from its stored record (or a new one). */
export function learnGroup(stored: SchemaRecord | undefined, group: readonly SchemaObservation[], noticeIntervalMs: number): LearnedGroup {
  const schema = openSchema(stored ?? newSchema(group[0]!));
  const drifts: LearnedGroup["drifts"] = [];
  const notices: SchemaDriftNotice[] = [];
  const shapes = new Map<string, BodyShape | undefined>();
  // Captures of one type mostly repeat the shape of the one before. A shape judged without
  // drift, learned, then met again is without drift again: its paths and types are now known
  // (or the schema had no room to report them before and has none now), and a path it lacks
  // was under the expected share before and is further under it after. Such repeats are only
  // counted, then learned together (`learnSamples`): one pass over the shape's paths per run,
  // not per capture.
  let clean: BodyShape | undefined;
  let repeats = 0;
  let firstAt = 0;
  let lastAt = 0;
  const learnRepeats = () => {
    if (clean !== undefined && repeats > 0) learnSamples(schema, clean, repeats, firstAt, lastAt);
    repeats = 0;
  };
  for (const o of group) {
    const shape = decodedShape(o.shape, shapes);
    if (shape !== undefined && shape === clean) {
      firstAt = repeats === 0 ? o.receivedAt : Math.min(firstAt, o.receivedAt);
      lastAt = repeats === 0 ? o.receivedAt : Math.max(lastAt, o.receivedAt);
      repeats += 1;
      continue;
    }
    learnRepeats();
    const judged = schema.record.samples >= SCHEMA_LIMITS.samplesBeforeDrift;
    const seen = observe(schema, o, noticeIntervalMs, shapes);
    clean = seen && judged && seen.drift.length === 0 ? shape : undefined;
    if (!seen) continue;
    if (seen.drift.length > 0) drifts.push({ eventId: o.eventId, changes: seen.drift });
    if (seen.notice) notices.push(seen.notice);
  }
  learnRepeats();
  return { schema: schema.record, drifts, notices };
}
