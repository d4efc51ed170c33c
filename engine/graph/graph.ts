import { CycleError } from "../errors";

/** A directed graph of named nodes; an edge a → b means "a depends on b". Knows nothing of HCL. */
export class Graph {
  private readonly deps = new Map<string, Set<string>>();

  add(node: string): void {
    if (!this.deps.has(node)) this.deps.set(node, new Set());
  }

  connect(node: string, dependsOn: string): void {
    this.add(node);
    this.add(dependsOn);
    this.deps.get(node)!.add(dependsOn);
  }

  nodes(): string[] {
    return [...this.deps.keys()];
  }

  has(node: string): boolean {
    return this.deps.has(node);
  }

  dependenciesOf(node: string): string[] {
    return [...(this.deps.get(node) ?? [])];
  }

  /** Everything a node depends on, directly or not. */
  ancestors(node: string): Set<string> {
    const seen = new Set<string>();
    const stack = [...(this.deps.get(node) ?? [])];
    while (stack.length) {
      const n = stack.pop()!;
      if (seen.has(n)) continue;
      seen.add(n);
      stack.push(...(this.deps.get(n) ?? []));
    }
    return seen;
  }

  /** The same nodes with every edge turned around (for destroy order). */
  reversed(): Graph {
    const g = new Graph();
    for (const [n, ds] of this.deps) {
      g.add(n);
      for (const d of ds) g.connect(d, n);
    }
    return g;
  }

  /** Strongly connected components with more than one node, or a node depending on itself (Tarjan). */
  cycles(): string[][] {
    let index = 0;
    const idx = new Map<string, number>();
    const low = new Map<string, number>();
    const onStack = new Set<string>();
    const stack: string[] = [];
    const out: string[][] = [];
    const strong = (v: string): void => {
      idx.set(v, index);
      low.set(v, index);
      index++;
      stack.push(v);
      onStack.add(v);
      for (const w of [...this.deps.get(v)!].sort()) {
        if (!idx.has(w)) {
          strong(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
      }
      if (low.get(v) === idx.get(v)) {
        const comp: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          comp.push(w);
        } while (w !== v);
        if (comp.length > 1 || this.deps.get(v)!.has(v)) out.push(comp.reverse());
      }
    };
    for (const n of [...this.deps.keys()].sort()) if (!idx.has(n)) strong(n);
    return out;
  }

  /** Throws CycleError ("Cycle: a, b") when the graph has a cycle. */
  assertAcyclic(): void {
    const cycles = this.cycles();
    if (cycles.length) throw new CycleError(cycles);
  }

  /** Dependencies first; ties broken by name so the order is stable. */
  topologicalOrder(): string[] {
    this.assertAcyclic();
    const out: string[] = [];
    const done = new Set<string>();
    const visit = (n: string): void => {
      if (done.has(n)) return;
      done.add(n);
      for (const d of [...this.deps.get(n)!].sort()) visit(d);
      out.push(n);
    };
    for (const n of [...this.deps.keys()].sort()) visit(n);
    return out;
  }
}

/**
 * How long a walk keeps the event loop before it lets the rest of the process in. A node whose provider
 * works locally completes without waiting on anything, so a walk of many such nodes is one chain of
 * microtasks: nothing else in the process ran until it ended — on a runner, the answers to its event
 * uploads and the next upload's request (a walk of 210 local resources held the loop 34 ms).
 *
 * Tried once before and reverted (73de7c4): the local provider's file calls went through the thread pool
 * then, which let the loop turn at every file anyway, and the extra turns only made uploads smaller and more.
 * Its calls are synchronous now, and without turns the walk's events waited for the walk's end: event
 * latency p99 92–113 ms in the benchmark's walk phase (1–100 viewers) against 39–69 with turns every 4 ms (one
 * run at 122), throughput the same (164–193 against 169–197 update jobs a minute through one runner, interleaved).
 * Every 1 ms against 4 (three interleaved pairs of the event phases, two of the throughput phase; two more pairs
 * against 2 ms): walk p99 with one viewer 31–35 ms against 48–50 (2 ms: 36–43), with 10 and 100 viewers within
 * the noise (26–60 / 55–70 against 30–44 / 45–100), 199–203 update jobs a minute against 179–202.
 */
const TURN_MS = 1;
let turnAt = performance.now();
let marked = false;

/** Notes when the event loop next turns (timers, I/O, then this), whoever let it turn. */
function markTurn(): void {
  if (marked) return;
  marked = true;
  setImmediate(() => {
    marked = false;
    turnAt = performance.now();
  });
}

/**
 * Resolves at once while the event loop turned within TURN_MS; otherwise once it has turned and the time
 * since is short again. Nodes that waited together resume together, so each looks again: those past the
 * slice wait for the next turn, with its timers and I/O first.
 */
async function turnTaken(): Promise<void> {
  markTurn();
  while (performance.now() - turnAt >= TURN_MS) {
    await new Promise((resolve) => setImmediate(resolve));
    markTurn();
  }
}

export interface WalkOptions {
  parallelism?: number;
  signal?: AbortSignal;
}

export interface WalkResult {
  completed: string[];
  failed: Map<string, unknown>;
  /** Nodes not run because something they depend on failed. */
  skipped: string[];
  /** Nodes not started because the signal aborted the walk. */
  notStarted: string[];
  aborted: boolean;
}

/**
 * Runs `visit` for every node once all its dependencies have completed, at most `parallelism`
 * at a time. A failed node's dependents are skipped; independent nodes still run. When the
 * signal aborts, no new node starts and in-flight ones are awaited.
 */
export async function walk(graph: Graph, visit: (node: string) => Promise<void>, opts: WalkOptions = {}): Promise<WalkResult> {
  graph.assertAcyclic();
  const limit = Math.max(1, opts.parallelism ?? 10);
  const nodes = graph.nodes().sort();
  const remaining = new Map(nodes.map((n) => [n, new Set(graph.dependenciesOf(n))]));
  const dependents = new Map<string, string[]>(nodes.map((n) => [n, []]));
  for (const n of nodes) for (const d of graph.dependenciesOf(n)) dependents.get(d)!.push(n);

  const result: WalkResult = { completed: [], failed: new Map(), skipped: [], notStarted: [], aborted: false };
  const ready: string[] = nodes.filter((n) => remaining.get(n)!.size === 0);
  const pending = new Set(nodes);
  let running = 0;

  const skip = (n: string): void => {
    for (const d of dependents.get(n)!) {
      if (!pending.has(d)) continue;
      pending.delete(d);
      result.skipped.push(d);
      skip(d);
    }
  };

  await new Promise<void>((resolve) => {
    const pump = (): void => {
      if (opts.signal?.aborted) result.aborted = true;
      while (!result.aborted && running < limit && ready.length > 0) {
        const n = ready.shift()!;
        if (!pending.has(n)) continue;
        pending.delete(n);
        running++;
        turnTaken()
          .then(() => visit(n))
          .then(
            () => {
              result.completed.push(n);
              for (const d of dependents.get(n)!) {
                const rem = remaining.get(d)!;
                rem.delete(n);
                if (rem.size === 0 && pending.has(d)) ready.push(d);
              }
            },
            (err: unknown) => {
              result.failed.set(n, err);
              skip(n);
            },
          )
          .finally(() => {
            running--;
            pump();
          });
      }
      if (running === 0 && (result.aborted || ready.length === 0)) {
        result.notStarted = [...pending];
        resolve();
      }
    };
    pump();
  });
  return result;
}
