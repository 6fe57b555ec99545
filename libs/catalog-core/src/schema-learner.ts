import { SCHEMA_DRIFT_ALERT_INTERVAL_S } from "@whc/api-model";
import type { CatalogStore } from "./ports.js";
import type { SchemaDriftNotice, SchemaObservation } from "./types.js";

/**
 * Where schema.drift goes (design §19, raised through alert channels, design §18): called with
 * the notices due, each after its drift was stored, at most one per endpoint and event type per
 * notice interval (SCHEMA_DRIFT_ALERT_INTERVAL_S), with the count of drifted captures since the
 * last one. Alert channels plug in here (ADR 0090); what it throws is logged, never retried.
 */
export type OnSchemaDrift = (notices: readonly SchemaDriftNotice[]) => void | Promise<void>;

export interface SchemaLearnerOptions {
  /** How long observations wait to be learned together (one store call for all of them). */
  delayMs: number;
  /** Observations waiting at most; past it, new ones are not learned (counted in `dropped`). */
  maxQueued: number;
  /** Observations per store call. */
  batch: number;
  /** How often schema.drift may be raised per endpoint and event type. */
  noticeIntervalMs: number;
  onDrift: OnSchemaDrift | undefined;
  logger: { warn(obj: object, msg: string): void } | undefined;
}

export const SCHEMA_LEARNER_DEFAULTS: SchemaLearnerOptions = {
  delayMs: 50,
  maxQueued: 20_000,
  batch: 1000,
  noticeIntervalMs: SCHEMA_DRIFT_ALERT_INTERVAL_S * 1000,
  onDrift: undefined,
  logger: undefined,
};

/** Learns what appends observed, off their answer path (ADR 0090). */
export interface SchemaLearner {
  /** Queues stored captures' shapes; returns at once. */
  observe(observations: readonly SchemaObservation[]): void;
  /** Learns everything queued so far, and answers once it is stored. */
  flush(): Promise<void>;
  /** Takes no more observations and learns what is queued. */
  close(): Promise<void>;
  /** Observations not learned: the queue was full, or the store refused them. */
  readonly dropped: number;
}

/**
 * The catalog's schema learner: an append hands it its stored captures' shapes after the
 * commit, and it learns them `delayMs` later, together, in one store call (learnSchemas) per
 * `batch`, one call at a time; while one runs, what arrives waits for the next. The sender's
 * answer never waits for it. What is queued when the process dies is not learned: those
 * captures count as samples nowhere and are never judged (ADR 0090).
 */
export function createSchemaLearner(store: Pick<CatalogStore, "learnSchemas">, options: Partial<SchemaLearnerOptions> = {}): SchemaLearner {
  const o: SchemaLearnerOptions = { ...SCHEMA_LEARNER_DEFAULTS, ...options };
  const queue = new Queued();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | undefined;
  let closed = false;
  let dropped = 0;

  async function learn(batch: SchemaObservation[]): Promise<void> {
    // Only the count is kept across the store call: a store that encodes the batch as it is
    // called (the embedded store's thread) lets its objects die young.
    const count = batch.length;
    let notices: SchemaDriftNotice[];
    try {
      notices = await store.learnSchemas(batch, o.noticeIntervalMs);
    } catch (err) {
      dropped += count;
      o.logger?.warn({ err, observations: count }, "schemas not learned");
      return;
    }
    if (notices.length === 0 || !o.onDrift) return;
    try {
      await o.onDrift(notices);
    } catch (err) {
      o.logger?.warn({ err, notices: notices.length }, "schema drift not raised");
    }
  }

  function drain(): Promise<void> {
    running ??= (async () => {
      while (queue.length > 0) await learn(queue.take(o.batch));
    })().finally(() => {
      running = undefined;
      // Observed after the loop's last look, before this: the next round.
      if (queue.length > 0) schedule();
    });
    return running;
  }

  function schedule(): void {
    if (timer !== undefined || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      void drain();
    }, o.delayMs);
    timer.unref?.();
  }

  return {
    observe(observations) {
      if (observations.length === 0) return;
      if (closed) {
        dropped += observations.length;
        return;
      }
      const room = o.maxQueued - queue.length;
      if (room < observations.length) dropped += observations.length - Math.max(room, 0);
      if (room <= 0) return;
      for (let i = 0; i < Math.min(room, observations.length); i += 1) queue.push(observations[i]!);
      // A drain in progress takes them in its next round; else they wait for the next one.
      if (running === undefined) schedule();
    },

    async flush() {
      if (timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
      }
      if (running) await running;
      await drain();
    },

    async close() {
      closed = true;
      await this.flush();
    },

    get dropped() {
      return dropped;
    },
  };
}

/**
 * Observations waiting to be learned, field by field: an observation waits about `delayMs`, so
 * an object per capture would outlive the young generation and be copied and promoted by the
 * collector (on the all-in-one's event loop: about 1 % of a capture's CPU, side by side); its
 * strings are the capture's own and live as long anyway. The objects are made again just before
 * the store call.
 */
class Queued {
  private accountIds: string[] = [];
  private endpointIds: string[] = [];
  private eventTypes: string[] = [];
  private eventIds: string[] = [];
  private receivedAts: number[] = [];
  private shapes: string[] = [];

  get length(): number {
    return this.eventIds.length;
  }

  push(o: SchemaObservation): void {
    this.accountIds.push(o.accountId);
    this.endpointIds.push(o.endpointId);
    this.eventTypes.push(o.eventType);
    this.eventIds.push(o.eventId);
    this.receivedAts.push(o.receivedAt);
    this.shapes.push(o.shape);
  }

  /** The first `most` observations, no longer queued. */
  take(most: number): SchemaObservation[] {
    const n = Math.min(most, this.length);
    const out: SchemaObservation[] = new Array(n);
    for (let i = 0; i < n; i += 1) {
      out[i] = {
        accountId: this.accountIds[i]!,
        endpointId: this.endpointIds[i]!,
        eventType: this.eventTypes[i]!,
        eventId: this.eventIds[i]!,
        receivedAt: this.receivedAts[i]!,
        shape: this.shapes[i]!,
      };
    }
    this.accountIds = this.accountIds.slice(n);
    this.endpointIds = this.endpointIds.slice(n);
    this.eventTypes = this.eventTypes.slice(n);
    this.eventIds = this.eventIds.slice(n);
    this.receivedAts = this.receivedAts.slice(n);
    this.shapes = this.shapes.slice(n);
    return out;
  }
}
