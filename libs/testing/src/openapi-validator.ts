import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

type Json = Record<string, any>;
// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;

/**
 * Checks live responses against the served OpenAPI document: the operation is found by
 * method and path template, the status must be documented (or the operation have a `default`
 * answer), documented headers present where the document says so, and the JSON body must
 * match the response schema.
 */
export function createOpenApiValidator(doc: Json) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: "doc", components: doc.components }, "doc");
  const routes = Object.entries(doc.paths as Record<string, Json>).map(([template, item]) => ({
    template,
    item,
    regex: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
  }));
  const cache = new Map<string, ReturnType<Ajv2020["compile"]>>();

  function schemaValidator(schema: Json) {
    const key = JSON.stringify(schema);
    let validate = cache.get(key);
    if (!validate) {
      const rewritten = JSON.parse(key.replaceAll('"#/components/', '"doc#/components/')) as Json;
      validate = ajv.compile(rewritten);
      cache.set(key, validate);
    }
    return validate;
  }

  return function validateResponse(method: string, url: string, status: number, headers: Headers, body: unknown): void {
    const path = new URL(url, "http://x").pathname;
    const route = routes.find((r) => r.regex.test(path));
    const where = `${method} ${path} -> ${status}`;
    if (!route) {
      if (status === 404) return; // unknown routes answer not_found; nothing documents them
      throw new Error(`undocumented path: ${where}`);
    }
    const operation = route.item[method.toLowerCase()] as Json | undefined;
    if (!operation) {
      if (status === 405) return;
      throw new Error(`undocumented method: ${where}`);
    }
    const responses = operation.responses as Json;
    const response = (responses[String(status)] ?? responses.default) as Json | undefined;
    if (!response) throw new Error(`undocumented status: ${where}`);
    for (const [name, header] of Object.entries((response.headers ?? {}) as Json)) {
      if (name === "X-Request-Id" && !headers.get(name)) throw new Error(`missing header ${name}: ${where}`);
      void header;
    }
    const schema = response.content?.["application/json"]?.schema as Json | undefined;
    if (!schema) {
      // `*/*`: any body (the receiving surface's configured answers).
      if (body !== undefined && !response.content?.["*/*"]) throw new Error(`undocumented body: ${where}`);
      return;
    }
    const validate = schemaValidator(schema);
    if (!validate(body)) {
      throw new Error(`response does not match the document: ${where}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`);
    }
  };
}

export type OpenApiValidator = ReturnType<typeof createOpenApiValidator>;
