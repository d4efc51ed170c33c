import fs from "node:fs";
const [file, fromS, toS] = process.argv.slice(2);
const p = JSON.parse(fs.readFileSync(file, "utf8"));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map();
let t = p.startTime;
const from = fromS ? Number(fromS) * 1e6 : 0, to = toS ? Number(toS) * 1e6 : Infinity;
let total = 0;
for (let i = 0; i < p.samples.length; i++) {
  t += p.timeDeltas[i];
  const rel = t - p.startTime;
  if (rel < from || rel > to) continue;
  const n = byId.get(p.samples[i]);
  const cf = n.callFrame;
  const key = `${cf.functionName || "(anon)"} ${cf.url.split("/").slice(-2).join("/")}:${cf.lineNumber}`;
  const d = p.timeDeltas[i + 1] ?? 0;
  self.set(key, (self.get(key) ?? 0) + d);
  total += d;
}
console.log("window total ms", (total / 1000).toFixed(0), "duration s", ((p.endTime - p.startTime) / 1e6).toFixed(2));
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 45))) console.log((v / 1000).toFixed(1).padStart(8), k);
