// A module's README as simple markdown: headings, paragraphs, lists, fenced code, inline `code`,
// **bold** and [links](…). Built as React elements (never HTML), so a README cannot inject markup.
import type { ReactNode } from "react";

type Block = { type: "heading"; level: number; text: string } | { type: "code"; text: string } | { type: "list"; ordered: boolean; items: string[] } | { type: "paragraph"; text: string };

export function parseMarkdown(source: string): Block[] {
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^\s*(```|~~~)/.test(line)) {
      const fence = line.trim().slice(0, 3);
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence)) body.push(lines[i++]);
      i++;
      blocks.push({ type: "code", text: body.join("\n") });
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      blocks.push({ type: "heading", level: heading[1].length, text: heading[2] });
      i++;
      continue;
    }
    const item = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (item) {
      const ordered = /\d/.test(item[1]);
      const items: string[] = [];
      while (i < lines.length) {
        const m = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i]);
        if (m) items.push(m[2]);
        else if (lines[i].trim() && /^\s{2,}/.test(lines[i]) && items.length) items[items.length - 1] += ` ${lines[i].trim()}`;
        else break;
        i++;
      }
      blocks.push({ type: "list", ordered, items });
      continue;
    }
    if (/^ {4}|\t/.test(line) && line.trim()) {
      const body: string[] = [];
      while (i < lines.length && (/^ {4}|\t/.test(lines[i]) || !lines[i].trim())) body.push(lines[i++].replace(/^ {4}|\t/, ""));
      blocks.push({ type: "code", text: body.join("\n").trimEnd() });
      continue;
    }
    if (!line.trim()) {
      i++;
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && lines[i].trim() && !/^(#{1,6}\s|\s*(```|~~~)|\s*([-*+]|\d+[.)])\s)/.test(lines[i])) para.push(lines[i++].trim());
    blocks.push({ type: "paragraph", text: para.join(" ") });
  }
  return blocks;
}

/** `code`, **bold**, *emphasis* and [text](http…) inside a line; everything else is text. */
function inline(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  const re = /`([^`]+)`|\*\*([^*]+)\*\*|\*([^*]+)\*|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let last = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const k = out.length;
    if (m[1] !== undefined) out.push(<code key={k} className="rounded bg-slate-100 px-1 py-0.5 font-mono text-[0.85em] text-slate-800">{m[1]}</code>);
    else if (m[2] !== undefined) out.push(<strong key={k}>{m[2]}</strong>);
    else if (m[3] !== undefined) out.push(<em key={k}>{m[3]}</em>);
    else if (/^https?:\/\//.test(m[5])) out.push(<a key={k} href={m[5]} rel="noreferrer noopener" target="_blank" className="text-indigo-700 underline">{m[4]}</a>);
    else out.push(m[4]);
    last = re.lastIndex;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

const HEADING = ["text-lg", "text-base", "text-sm", "text-sm", "text-sm", "text-sm"];

export function SimpleMarkdown({ source }: { source: string }) {
  return (
    <div className="space-y-3 text-sm leading-6 text-slate-700">
      {parseMarkdown(source).map((b, i) => {
        if (b.type === "heading") {
          const Tag = `h${Math.min(b.level + 2, 6)}` as "h3";
          return <Tag key={i} className={`${HEADING[b.level - 1]} pt-1 font-semibold text-slate-900`}>{inline(b.text)}</Tag>;
        }
        if (b.type === "code") return <pre key={i} className="overflow-x-auto rounded-md bg-slate-900 p-3 font-mono text-xs leading-5 text-slate-100">{b.text}</pre>;
        if (b.type === "list") {
          const List = b.ordered ? "ol" : "ul";
          return (
            <List key={i} className={`${b.ordered ? "list-decimal" : "list-disc"} space-y-1 pl-5`}>
              {b.items.map((it, j) => <li key={j}>{inline(it)}</li>)}
            </List>
          );
        }
        return <p key={i}>{inline(b.text)}</p>;
      })}
    </div>
  );
}
