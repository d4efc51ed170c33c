import fs from "node:fs";
const [file, pat] = process.argv.slice(2);
const p = JSON.parse(fs.readFileSync(file, "utf8"));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
let t = p.startTime, first = null, last = null;
for (let i = 0; i < p.samples.length; i++) {
  t += p.timeDeltas[i];
  for (let id = p.samples[i]; id; id = parent.get(id)) { const n = byId.get(id); if (n.callFrame.url.includes(pat)) { first ??= t; last = t; break; } }
}
console.log(((first - p.startTime) / 1e6).toFixed(2), ((last - p.startTime) / 1e6).toFixed(2));
