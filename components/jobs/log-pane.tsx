// One step's log in xterm.js: ANSI colours, follows the tail while running (xterm keeps the
// reader's place once they scroll up), searchable. Load it with next/dynamic({ ssr: false }):
// xterm touches `self` at import.
"use client";
import "@xterm/xterm/css/xterm.css";
import { useEffect, useRef, useState } from "react";
import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import { SearchAddon } from "@xterm/addon-search";
import { ArrowDown, ChevronDown, ChevronUp, Search } from "lucide-react";
import type { LogPayload, ProgressEvent } from "@/lib/runner-protocol";
import type { JobEventStore } from "./job-events";

const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;
const SEARCH_DECORATIONS = { matchOverviewRuler: "#fbbf24", activeMatchColorOverviewRuler: "#f59e0b", matchBackground: "#92400e", activeMatchBackground: "#d97706" };

export function LogPane({ store, step, live }: { store: JobEventStore; step: string; live: boolean }) {
  const hostRef = useRef<HTMLDivElement>(null);
  const textRef = useRef<HTMLPreElement>(null);
  const searchRef = useRef<SearchAddon | null>(null);
  const termRef = useRef<Terminal | null>(null);
  const [lines, setLines] = useState(0);
  const [query, setQuery] = useState("");
  const [matches, setMatches] = useState<{ index: number; count: number } | null>(null);

  useEffect(() => {
    const host = hostRef.current;
    const text = textRef.current;
    if (!host || !text) return;
    const term = new Terminal({
      convertEol: true,
      disableStdin: true,
      cursorBlink: false,
      cursorInactiveStyle: "none",
      fontSize: 12,
      lineHeight: 1.25,
      fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace",
      scrollback: 200_000,
      allowProposedApi: true,
      theme: { background: "#0f172a", foreground: "#e2e8f0", cursor: "#0f172a", selectionBackground: "#334155" },
    });
    const fit = new FitAddon();
    const search = new SearchAddon();
    term.loadAddon(fit);
    term.loadAddon(search);
    term.open(host);
    term.write("\x1b[?25l");
    fit.fit();
    termRef.current = term;
    searchRef.current = search;
    const results = search.onDidChangeResults((r) => setMatches(r ? { index: r.resultIndex, count: r.resultCount } : null));

    let written = 0;
    let lastSeq = 0;
    const write = (events: ProgressEvent[]) => {
      let chunk = "";
      let plain = "";
      for (const e of events) {
        // The store hands each event once; lastSeq guards against a listener racing the first read.
        if (e.seq <= lastSeq || e.operation !== step || e.type !== "log") continue;
        lastSeq = e.seq;
        const line = String((e.payload as unknown as LogPayload).line ?? "").replace(/\r?\n$/, "");
        chunk += line.replace(/\r?\n/g, "\r\n") + "\r\n";
        plain += line.replace(ANSI, "") + "\n";
        written++;
      }
      if (!chunk) return;
      term.write(chunk);
      text.append(plain);
      setLines(written);
    };
    write(store.events);
    const unsubscribe = store.subscribe(write);
    const ro = new ResizeObserver(() => fit.fit());
    ro.observe(host);
    return () => {
      unsubscribe();
      ro.disconnect();
      results.dispose();
      term.dispose();
      text.textContent = "";
      termRef.current = null;
    };
  }, [store, step]);

  const find = (dir: "next" | "previous") => {
    if (!query) return;
    const opts = { caseSensitive: false, decorations: SEARCH_DECORATIONS };
    if (dir === "next") searchRef.current?.findNext(query, opts);
    else searchRef.current?.findPrevious(query, opts);
  };

  return (
    <div className="overflow-hidden rounded-md bg-slate-900 ring-1 ring-slate-800" data-testid={`log-pane-${step}`} data-lines={lines}>
      <div className="flex items-center gap-2 border-b border-slate-800 px-2 py-1.5">
        <form
          role="search"
          className="flex flex-1 items-center gap-1"
          onSubmit={(e) => {
            e.preventDefault();
            find("next");
          }}
        >
          <Search className="h-3.5 w-3.5 text-slate-500" aria-hidden />
          <label htmlFor={`log-search-${step}`} className="sr-only">
            Search the {step} log
          </label>
          <input
            id={`log-search-${step}`}
            type="search"
            value={query}
            onChange={(e) => {
              setQuery(e.target.value);
              if (!e.target.value) {
                searchRef.current?.clearDecorations();
                setMatches(null);
              }
            }}
            placeholder="Search log"
            className="w-48 rounded bg-slate-800 px-2 py-1 text-xs text-slate-100 placeholder:text-slate-500 focus:outline-none focus:ring-1 focus:ring-indigo-400"
          />
          <button type="button" aria-label="Previous match" onClick={() => find("previous")} className="rounded p-1 text-slate-400 hover:bg-slate-800 hover:text-white">
            <ChevronUp className="h-3.5 w-3.5" />
          </button>
          <button type="submit" aria-label="Next match" className="rounded p-1 text-slate-400 hover:bg-slate-800 hover:text-white">
            <ChevronDown className="h-3.5 w-3.5" />
          </button>
          {query && matches && (
            <span className="text-xs text-slate-400" aria-live="polite">
              {matches.count ? `${matches.index + 1} of ${matches.count}` : "no matches"}
            </span>
          )}
        </form>
        <span className="text-xs text-slate-500">
          {lines} {lines === 1 ? "line" : "lines"}
          {live && " · following"}
        </span>
        <button type="button" aria-label="Jump to the end of the log" title="Jump to the end" onClick={() => termRef.current?.scrollToBottom()} className="rounded p-1 text-slate-400 hover:bg-slate-800 hover:text-white">
          <ArrowDown className="h-3.5 w-3.5" />
        </button>
      </div>
      {/* Grows with the log up to 20 rows, so a short log is not a tall empty box. */}
      <div className="relative px-2 py-1" style={{ height: Math.min(360, Math.max(72, lines * 18 + 24)) }} aria-hidden>
        <div ref={hostRef} className="h-full w-full" />
        {lines === 0 && <div className="pointer-events-none absolute inset-0 flex items-center justify-center text-xs text-slate-500">{live ? "Waiting for the first line…" : "This step wrote no log lines."}</div>}
      </div>
      {/* The same lines as plain text, for screen readers and copying. */}
      <pre ref={textRef} className="sr-only" data-testid={`log-text-${step}`} aria-label={`${step} log, as text`} />
    </div>
  );
}
