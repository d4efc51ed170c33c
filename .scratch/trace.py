from collections import defaultdict
ev=defaultdict(list)
for l in open('/tmp/trace.txt'):
    t,c,w=l.split(' ',2); ev[c].append((float(t),w.strip()))
t0=min(es[0][0] for es in ev.values())
for c,es in sorted(ev.items(), key=lambda x:x[1][0][0]):
    print(c, ' '.join(f"{w}@{t-t0:.0f}" for t,w in es))
