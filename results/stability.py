#!/usr/bin/env python3
"""Renders STABILITY.md of a results folder from its verdicts.json and every verdicts-N.json beside it
(runs of the quick main job on one machine, of one commit): per claim the verdicts and intervals, whether
any flipped between REPRODUCED and NOT REPRODUCED, the time per claim, and the registry claims' variance
components. Usage: python3 results/stability.py results/<folder> > results/<folder>/STABILITY.md"""
import json, sys, glob, os
d = sys.argv[1]
files = [os.path.join(d, 'verdicts.json')] + sorted(glob.glob(os.path.join(d, 'verdicts-*.json')))
runs = [json.load(open(f)) for f in files]
def cell(o):
    v = o['verdict']
    if 'Err' in v: return 'ERROR'
    v = v['Ok']
    label = v if isinstance(v, str) else list(v.keys())[0]
    label = {'Reproduced':'REPRODUCED','NotReproduced':'NOT REPRODUCED','Inconclusive':'INCONCLUSIVE','NotTestable':'NOT TESTABLE HERE'}[label]
    r = o.get('interval')
    if r and label != 'NOT TESTABLE HERE':
        return f"{label} {r['ratio']:.3f} [{r['low']:.3f}, {r['high']:.3f}]"
    if o.get('counts'):
        c = o['counts']
        return f"{label} {sum(c['baseline'])} vs {sum(c['contender'])}"
    return label
ids = [o['claim']['id'] for o in runs[0]['outcomes']]
out = []
out.append(f"# Stability of the quick main job: {len(runs)} runs on one machine\n")
for i, r in enumerate(runs):
    m = r['machine']
    secs = {}
    for o in r['outcomes']:
        secs[tuple(o['group'])] = o['seconds']
    out.append(f"- run {i+1}: `{os.path.basename(files[i])}`, {r['created']}, commit `{r['git_commit'][:12]}`, seed {r['settings']['seed']}, {m['host']} ({m['cores']} cores, {m['cpu_model']}), {sum(secs.values()):.0f} s of measurement")
out.append("\nEach cell: verdict, ratio [99.9% CI] (count claims: baseline vs contender events summed over replicates).\n")
out.append("| Claim | " + " | ".join(f"Run {i+1}" for i in range(len(runs))) + " | Flips between REPRODUCED and NOT REPRODUCED? |")
out.append("|---|" + "---|" * len(runs) + "---|")
flips = 0
for cid in ids:
    cells = []
    labels = []
    for r in runs:
        o = next((x for x in r['outcomes'] if x['claim']['id'] == cid), None)
        c = cell(o) if o else '-'
        cells.append(c)
        labels.append(c.split(' ')[0] + (' ' + c.split(' ')[1] if c.startswith('NOT') else ''))
    flip = ('REPRODUCED' in labels) and ('NOT REPRODUCED' in labels)
    flips += flip
    out.append(f"| `{cid}` | " + " | ".join(cells) + f" | {'**yes**' if flip else 'no'} |")
out.append(f"\nClaims that flipped between REPRODUCED and NOT REPRODUCED: {flips} of {len(ids)}.\n")
out.append("## Time per claim (run 1; claims measured together share their time)\n")
out.append("| Claim | Replicates | Seconds | Measured with |\n|---|---|---|---|")
for o in runs[0]['outcomes']:
    reps = len(o['replicates']); kind = o['replicate_kind']
    reps_s = '-' if reps == 0 else f"{reps} {'seeds' if kind=='seed' else 'pairs'}"
    others = [g for g in o['group'] if g != o['claim']['id']]
    out.append(f"| `{o['claim']['id']}` | {reps_s} | {o['seconds']:.1f} | {', '.join(others) or '-'} |")
out.append("\n## Variance components of the registry claims (every run)\n")
out.append("T1² within-pair and T2² between-pair variance of the block log ratios, ρ = T2²/(T1²+T2²), m* = Kalibera's blocks per pair for the measured costs.\n")
out.append("| Claim | Run | T1² | T2² | ρ | design effect | m* |\n|---|---|---|---|---|---|---|")
for cid in ids:
    if not (cid.startswith('SOLR') or cid.startswith('registry')): continue
    for i, r in enumerate(runs):
        o = next((x for x in r['outcomes'] if x['claim']['id'] == cid), None)
        c = o and o.get('components')
        if not c: 
            out.append(f"| `{cid}` | {i+1} | - | - | - | - | - |"); continue
        out.append(f"| `{cid}` | {i+1} | {c['within']:.2e} | {c['between']:.2e} | {c['rho']:.2f} | {c['design_effect']:.2f} | {o.get('optimal_blocks') or '-'} |")
print("\n".join(out))
