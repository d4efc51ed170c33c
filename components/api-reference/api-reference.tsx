// The API reference page: the OpenAPI document of /api/v1 rendered as the console's own pages are.
// Written here rather than embedding Swagger UI or Redoc: those load their own scripts and styles
// (against the console's Content-Security-Policy, and without network on many installs), and look foreign.
import type { ReactNode } from "react";
import { Badge, type BadgeTone } from "@/components/ui/badge";
import { Card, PageHeader } from "@/components/ui/page";
import { Table, Tbody, Td, Th } from "@/components/ui/table";

/** The parts of an OpenAPI 3.1 document this page reads. */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  const?: unknown;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  required?: string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  description?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
}
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
}
interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: JsonSchema }> }>;
}
export interface OpenApiDoc {
  info: { title: string; version: string; description?: string };
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

const METHOD_TONE: Record<string, BadgeTone> = { get: "blue", post: "green", put: "yellow", patch: "yellow", delete: "red" };
const refName = (ref: string) => ref.split("/").pop() ?? ref;
const anchor = (name: string) => `schema-${name}`;

/** A schema as a short type: `string`, `InfraJob` (a link), `"a" | "b"`, `array of X`, `X | null`. */
function TypeOf({ schema }: { schema?: JsonSchema }): ReactNode {
  if (!schema) return <span className="text-slate-400">any</span>;
  if (schema.$ref) {
    const name = refName(schema.$ref);
    return (
      <a href={`#${anchor(name)}`} className="font-medium text-indigo-700 hover:underline">
        {name}
      </a>
    );
  }
  const alts = schema.anyOf ?? schema.oneOf;
  if (alts) return join(alts.map((s, i) => <TypeOf key={i} schema={s} />), " | ");
  if (schema.allOf) return join(schema.allOf.map((s, i) => <TypeOf key={i} schema={s} />), " & ");
  if (schema.const !== undefined) return <code>{JSON.stringify(schema.const)}</code>;
  if (schema.enum) return <code className="whitespace-normal">{schema.enum.map((v) => JSON.stringify(v)).join(" | ")}</code>;
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const one = (t: string, i: number): ReactNode => {
    if (t === "array") return <span key={i}>array of <TypeOf schema={schema.items} /></span>;
    if (t === "object" && !schema.properties && schema.additionalProperties && typeof schema.additionalProperties === "object") {
      return <span key={i}>map of <TypeOf schema={schema.additionalProperties} /></span>;
    }
    return <span key={i}>{schema.format ? `${t} (${schema.format})` : t}</span>;
  };
  return types.length ? join(types.map(one), " | ") : <span className="text-slate-400">any</span>;
}

function join(parts: ReactNode[], sep: string): ReactNode {
  return parts.flatMap((p, i) => (i ? [sep, p] : [p]));
}

function Fields({ schema, label }: { schema: JsonSchema; label: string }) {
  const props = Object.entries(schema.properties ?? {});
  if (!props.length) return <p className="text-sm text-slate-600"><TypeOf schema={schema} /></p>;
  return (
    <Table label={label}>
      <thead>
        <tr>
          <Th>Field</Th>
          <Th>Type</Th>
          <Th>Description</Th>
        </tr>
      </thead>
      <Tbody>
        {props.map(([name, s]) => (
          <tr key={name}>
            <Td className="font-mono text-xs">
              {name}
              {!schema.required?.includes(name) && <span className="ml-1 text-slate-400">optional</span>}
            </Td>
            <Td className="whitespace-normal text-xs"><TypeOf schema={s} /></Td>
            <Td className="whitespace-normal text-xs text-slate-600">{s.description ?? ""}</Td>
          </tr>
        ))}
      </Tbody>
    </Table>
  );
}

function OperationCard({ method, path, op }: { method: string; path: string; op: Operation }) {
  const params = op.parameters ?? [];
  const body = op.requestBody?.content?.["application/json"]?.schema;
  const ok = Object.entries(op.responses ?? {}).find(([status]) => status.startsWith("2"));
  const okSchema = ok?.[1].content ? Object.values(ok[1].content)[0]?.schema : undefined;
  return (
    <Card className="mb-4">
      <div id={op.operationId} className="mb-2 flex flex-wrap items-center gap-3">
        <Badge tone={METHOD_TONE[method] ?? "gray"} className="uppercase">{method}</Badge>
        <code className="text-sm font-semibold text-slate-900">/api/v1{path}</code>
      </div>
      {op.summary && <p className="mb-3 text-sm text-slate-700">{op.summary}</p>}
      {params.length > 0 && (
        <Table label={`Parameters of ${method.toUpperCase()} ${path}`}>
          <thead>
            <tr>
              <Th>Parameter</Th>
              <Th>In</Th>
              <Th>Type</Th>
              <Th>Description</Th>
            </tr>
          </thead>
          <Tbody>
            {params.map((p) => (
              <tr key={`${p.in}:${p.name}`}>
                <Td className="font-mono text-xs">
                  {p.name}
                  {!p.required && <span className="ml-1 text-slate-400">optional</span>}
                </Td>
                <Td className="text-xs">{p.in}</Td>
                <Td className="whitespace-normal text-xs"><TypeOf schema={p.schema} /></Td>
                <Td className="whitespace-normal text-xs text-slate-600">{p.description ?? p.schema?.description ?? ""}</Td>
              </tr>
            ))}
          </Tbody>
        </Table>
      )}
      {body && (
        <div className="mt-3">
          <h4 className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-500">Body (JSON)</h4>
          <Fields schema={body} label={`Body of ${method.toUpperCase()} ${path}`} />
        </div>
      )}
      {ok && (
        <p className="mt-3 text-sm text-slate-600">
          <span className="font-semibold text-slate-700">{ok[0]}</span> → <TypeOf schema={okSchema} />
          {!okSchema && ok[1].description ? ` ${ok[1].description}` : ""}
        </p>
      )}
    </Card>
  );
}

export function ApiReference({ doc }: { doc: OpenApiDoc }) {
  const ops = Object.entries(doc.paths ?? {}).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));
  const tags = [...new Set(ops.map((o) => o.op.tags?.[0] ?? "Other"))];
  const schemas = Object.entries(doc.components?.schemas ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <>
      <PageHeader
        title="API reference"
        description={
          <>
            {doc.info.description} The machine-readable document:{" "}
            <a className="font-medium text-indigo-700 hover:underline" href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI {doc.info.version ? "3.1" : ""}).
          </>
        }
      />
      {tags.map((tag) => (
        <section key={tag} className="mb-8" aria-label={tag}>
          <h2 className="mb-3 text-lg font-semibold text-slate-900">{tag}</h2>
          {ops
            .filter((o) => (o.op.tags?.[0] ?? "Other") === tag)
            .map((o) => (
              <OperationCard key={`${o.method} ${o.path}`} {...o} />
            ))}
        </section>
      ))}
      <section aria-label="Schemas">
        <h2 className="mb-3 text-lg font-semibold text-slate-900">Schemas</h2>
        {schemas.map(([name, schema]) => (
          <Card key={name} className="mb-4" title={<span id={anchor(name)} className="font-mono">{name}</span>} description={schema.description}>
            <Fields schema={schema} label={`Fields of ${name}`} />
          </Card>
        ))}
      </section>
    </>
  );
}
