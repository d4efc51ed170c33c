import sys
p='server/services/state-backends/move.ts'
s=open(p).read()
def rep(a,b):
    global s
    assert a in s, a[:60]
    s=s.replace(a,b,1)
rep("async function runChunk(ctx: RunContext, chunk: RunItem[]): Promise<void> {\n","""const T0 = performance.now();
const TR: string[] = ((globalThis as any).__TR ??= []);
const tr = (c: RunItem[], what: string) => TR.push(`${(performance.now() - T0).toFixed(1)} ${c[0]?.id.slice(-4)} ${what}`);
async function runChunk(ctx: RunContext, chunk: RunItem[]): Promise<void> {
  tr(chunk, "start");
""")
rep('    await stepDone("held");','    tr(chunk, "held");\n    await stepDone("held");')
rep('    sources = planton.sources;','    sources = planton.sources;\n    tr(chunk, "lockstmt");')
rep('    await stepDone("locked");','    tr(chunk, "locked");\n    await stepDone("locked");')
rep('    await commitStep(ctx, copied, "locked", "copied", { copied: extra });','    tr(chunk, "copies");\n    await commitStep(ctx, copied, "locked", "copied", { copied: extra });\n    tr(chunk, "copiedcommit");')
rep('    const atOnce: RunItem[] = [];','    tr(chunk, "readback");\n    const atOnce: RunItem[] = [];')
rep('    if (atOnce.length && !switchOnly.length) await stepDone("done");','    tr(chunk, "donecommit");\n    if (atOnce.length && !switchOnly.length) await stepDone("done");')
open(p,'w').write(s)
b='bench/state-move.ts'
t=open(b).read()
t=t.replace('  for (const line of notes) console.log(`\\n${line}`);','  for (const line of notes) console.log(`\\n${line}`);\n  fs.writeFileSync("/tmp/trace.txt", ((globalThis as any).__TR ?? []).join("\\n"));')
open(b,'w').write(t)
