import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import type { SettingsSpec } from "@whc/config";
import { allInOneSpec, catalogSpec, cryptoSpec, gatewaySpec, ingestSpec, peerSpec, replaySpec } from "@whc/composition";
import { WORKSPACE_ROOT } from "@whc/testing";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";
import { PersistentVolumeClaim } from "kubernetes-models/v1/PersistentVolumeClaim";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";

/** Reading what `kubectl kustomize` renders from deploy/kubernetes, as the checks need it. */

export const KUBECTL = process.env.WHC_KUBECTL_BIN ?? "kubectl";
export const kubectlPresent = spawnSync(KUBECTL, ["version", "--client"]).error === undefined;
export const OVERLAYS = ["all-in-one", "distributed"] as const;
export type Overlay = (typeof OVERLAYS)[number];

/** The schema of every kind the manifests may hold; a kind missing here fails the test. */
export const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  "v1/Namespace": Namespace,
  "v1/ConfigMap": ConfigMap,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "v1/PersistentVolumeClaim": PersistentVolumeClaim,
  "apps/v1/Deployment": Deployment,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
};

export type Labels = Record<string, string>;
export interface LabelSelector {
  matchLabels?: Labels;
  matchExpressions?: { key: string; operator: "In" | "NotIn" | "Exists" | "DoesNotExist"; values?: string[] }[];
}
export interface HttpProbe {
  httpGet?: { path: string; port: string | number };
  grpc?: { port: number; service?: string };
}
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string; key: string } };
}
export interface Container {
  name: string;
  image: string;
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: unknown[];
  startupProbe?: HttpProbe;
  readinessProbe?: HttpProbe;
  livenessProbe?: HttpProbe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Labels };
  // Each kind's own fields; the checks read the ones they need.
  spec?: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

export const overlayDir = (overlay: Overlay) => path.join(WORKSPACE_ROOT, "deploy", "kubernetes", "overlays", overlay);

/** The objects a kustomization directory renders to (one of ours by default). */
export function render(overlay: Overlay, dir = overlayDir(overlay)): K8sObject[] {
  const text = execFileSync(KUBECTL, ["kustomize", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  return parseAllDocuments(text).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${dir}: ${doc.errors[0]!.message}`);
    const o = doc.toJS() as K8sObject;
    // kustomize wraps a generated Secret's base64 at 70 columns, which the API server's decoder
    // reads (it skips line breaks) and the schema's "byte" format does not.
    if (o.kind === "Secret" && o.data) for (const [k, v] of Object.entries(o.data)) o.data[k] = v.replace(/\n/g, "");
    return o;
  });
}

/** The first ```yaml block under a heading of docs/kubernetes.md. */
export function documentedYaml(heading: string): string {
  const doc = readFileSync(path.join(WORKSPACE_ROOT, "docs", "kubernetes.md"), "utf8");
  const section = doc.split(/^## /m).find((s) => s.startsWith(`${heading}\n`));
  const block = section && /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error(`docs/kubernetes.md has no yaml block under "## ${heading}"`);
  return block;
}

export function ofKind(objects: K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

export function matches(selector: LabelSelector, labels: Labels): boolean {
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpressions = (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    if (operator === "In") return values.includes(labels[key] ?? "\0");
    if (operator === "NotIn") return !values.includes(labels[key] ?? "\0");
    return operator === "Exists" ? key in labels : !(key in labels);
  });
  return byLabels && byExpressions;
}

export const podLabels = (d: K8sObject): Labels => d.spec.template.metadata.labels as Labels;
export const containersOf = (d: K8sObject): Container[] => d.spec.template.spec.containers as Container[];

/**
 * The settings each process reads, as its main.ts loads them: a container's variables are
 * checked against its own process, not only against the whole library.
 */
export const PROCESSES: Record<string, { spec: SettingsSpec; distributed: boolean }> = {
  gateway: { spec: { ...gatewaySpec, ...peerSpec }, distributed: true },
  ingest: { spec: { ...ingestSpec, ...peerSpec }, distributed: true },
  catalog: { spec: { ...catalogSpec, ...peerSpec }, distributed: true },
  crypto: { spec: { ...cryptoSpec, ...peerSpec }, distributed: true },
  replay: { spec: { ...replaySpec, ...peerSpec }, distributed: true },
  "all-in-one": { spec: allInOneSpec, distributed: false },
};

/** The process a container runs: the image's entry point is node, its last argument `dist/<app>/main.js` (V8's options before it). */
export function processOf(container: Container): string | undefined {
  return /^dist\/([a-z-]+)\/main\.js$/.exec(container.args?.at(-1) ?? "")?.[1];
}

/** The runtime stage's ENV of the Dockerfile: what every container starts with. */
export function imageEnv(): Record<string, string> {
  const dockerfile = readFileSync(path.join(WORKSPACE_ROOT, "Dockerfile"), "utf8");
  const runtime = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
  const env: Record<string, string> = {};
  for (const line of runtime.split("\n").filter((l) => l.startsWith("ENV "))) {
    for (const pair of line.slice(4).trim().split(/\s+/)) {
      const at = pair.indexOf("=");
      env[pair.slice(0, at)] = pair.slice(at + 1);
    }
  }
  return env;
}

/** A Secret's or ConfigMap's value of `key`, as the container would get it. */
function keyOf(objects: K8sObject[], kind: "Secret" | "ConfigMap", name: string, key: string): string {
  const source = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!source) throw new Error(`${kind} ${name} is referenced but not rendered`);
  const text = source.stringData?.[key] ?? (source.data?.[key] !== undefined && kind === "Secret" ? Buffer.from(source.data[key], "base64").toString() : source.data?.[key]);
  if (text === undefined) throw new Error(`${kind} ${name} has no key ${key}`);
  return text;
}

/**
 * A container's environment: the image's, then its own variables resolved from the rendered
 * Secrets and ConfigMaps. `secrets` replaces Secret values by key (filled-in placeholders).
 */
export function containerEnv(objects: K8sObject[], container: Container, secrets: Record<string, string> = {}): Record<string, string> {
  const env = imageEnv();
  for (const v of container.env ?? []) {
    const ref = v.valueFrom?.secretKeyRef ?? v.valueFrom?.configMapKeyRef;
    if (v.value !== undefined) env[v.name] = v.value;
    else if (v.valueFrom?.secretKeyRef && ref) env[v.name] = secrets[ref.key] ?? keyOf(objects, "Secret", ref.name, ref.key);
    else if (ref) env[v.name] = keyOf(objects, "ConfigMap", ref.name, ref.key);
    else throw new Error(`${container.name}: ${v.name} has neither a value nor a Secret or ConfigMap key`);
  }
  return env;
}

/** The container port a probe or Service names (by name or number). */
export function containerPort(container: Container, port: string | number): number {
  if (typeof port === "number") return port;
  const found = container.ports?.find((p) => p.name === port);
  if (!found) throw new Error(`${container.name} has no port named ${port}`);
  return found.containerPort;
}

const UNITS: Record<string, number> = { "": 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };

/** A memory quantity (`512Mi`) in bytes. */
export function bytesOf(quantity: string): number {
  const m = /^(\d+)(Ki|Mi|Gi)?$/.exec(quantity);
  if (!m) throw new Error(`unexpected quantity ${quantity}`);
  return Number(m[1]) * UNITS[m[2] ?? ""]!;
}
