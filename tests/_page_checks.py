"""Checks that a reproduction page's sentences state the numbers of its own tables.

Each ``check_*`` function reads the generated block of a page, parses its markdown
tables and its sentences (the bullet list the reproduction writes above them) and
asserts that every number a sentence states is the one the tables give: counts
recounted from the table's yes/no cells, ranges recomputed as the minimum and maximum
of a column, differences recomputed from two columns. They run on the committed
documentation pages and on the pages the ``--quick`` runs write.
"""

from __future__ import annotations

import re

NUMBER = r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?"


def tables(text: str) -> list[list[dict]]:
    """Every markdown table of ``text`` as a list of rows (header cell → cell text)."""
    out, lines = [], text.splitlines()
    i = 0
    while i < len(lines) - 1:
        if lines[i].startswith("|") and re.match(r"^\|[-:|\s]+\|$", lines[i + 1].strip()):
            head = [c.strip() for c in lines[i].strip().strip("|").split("|")]
            rows, j = [], i + 2
            while j < len(lines) and lines[j].startswith("|"):
                cells = [c.strip() for c in lines[j].strip().strip("|").split("|")]
                rows.append(dict(zip(head, cells, strict=False)))
                j += 1
            out.append(rows)
            i = j
        else:
            i += 1
    return out


def table_with(text: str, column: str) -> list[dict]:
    """The first table of ``text`` that has ``column``."""
    for t in tables(text):
        if t and column in t[0]:
            return t
    raise AssertionError(f"no table with a column {column!r}")


def bullets(text: str) -> list[str]:
    """The sentences the reproduction writes as a bullet list."""
    return [line[2:] for line in text.splitlines() if line.startswith("- ")]


def bullet(text: str, start: str) -> str:
    found = [b for b in bullets(text) if b.startswith(start)]
    assert found, f"no sentence starting {start!r}"
    return found[0]


def generated(text: str, name: str) -> str:
    begin = f"<!-- BEGIN GENERATED: {name} -->"
    assert begin in text, f"no generated block {name!r}"
    return text.split(begin, 1)[1].split("<!-- END GENERATED", 1)[0]


def span(cells: list[str]) -> str:
    """``"lo–hi"`` (or ``"lo"``) of numeric cells, each end printed as the table prints it."""
    vals = sorted(cells, key=float)
    return vals[0] if vals[0] == vals[-1] else f"{vals[0]}–{vals[-1]}"


def count(rows: list[dict], column: str) -> int:
    return sum(r[column] == "yes" for r in rows)


# ------------------------------------------------------------------ Tajima et al. (2020)
def check_tajima(page: str, block: str = "tajima2020 results") -> None:
    text = generated(page, block)
    rel = table_with(text, "FW rel. err @10")
    absolute = table_with(text, "FW err @10")
    iters = next(int(k.split("@")[1]) for k in rel[0] if k.startswith("FW rel. err @") and not k.endswith("@10"))
    n = len(rel)
    # the relative errors are the absolute ones over P_best (to the printed digits)
    for a, r in zip(absolute, rel, strict=True):
        for col in ("10", str(iters)):
            ratio = float(a[f"FW err @{col}"]) / float(a["P_best"])
            assert abs(ratio - float(r[f"FW rel. err @{col}"])) <= 0.006 * ratio, (a, r)
    first = bullet(text, "The projected gradient's best iterate")
    cora = [r for r in rel if r["data"].startswith("Cora")]
    assert (f"is w = 0 in {count(rel, 'PG best = w⁰')} of {n} cases, and it is ahead of Frank-Wolfe at 10 "
            f"iterations in {count(rel, 'PG ahead @10')} of {n}") in first, first
    assert first.rstrip(").").endswith(f"in {count(cora, 'PG ahead @10')} of {len(cora)}"), first
    second = bullet(text, "Frank-Wolfe's best objective is below")
    assert f"t ≥ 15 in {count(rel, 'FW ahead ∀t ≥ 15')} of {n} cases" in second, second
    for name in dict.fromkeys(r["data"] for r in rel):
        rows = [r for r in rel if r["data"] == name]
        arows = [r for r in absolute if r["data"] == name]
        s = bullet(text, f"{name}:")
        gaps = [g for r in rows for g in r[f"FW gap, min–max over t = 1…{iters}"].split("–")]
        expected = [
            f"relative error is {span([r['FW rel. err @10'] for r in rows])} after 10 iterations and "
            f"{span([r[f'FW rel. err @{iters}'] for r in rows])} after {iters}",
            f"lies between {min(gaps, key=float)} and {max(gaps, key=float)} over iterations 1–{iters}",
            f"is {span([r[f'FW gap @{iters} / P_best'] for r in rows])} times the best objective",
            f"its error after {iters} iterations is {span([r[f'FW err @{iters} against D(α^(T′))'] for r in rows])};",
            f"against D_ref it is {span([r[f'FW err @{iters}'] for r in arows])}",
            f"lies below D_ref by {span([r['(D_ref − D(α^(T′)))/P_best'] for r in rows])} of P_best",
        ]
        for e in expected:
            assert e in s, (e, s)
    thm = bullet(text, "Theorem 6.1 asks for")
    assert f"asks for {span([r['Thm 6.1 T for ε = P_best'] for r in rel])} iterations" in thm, thm
    if "sign-constrained" in text:
        _check_tajima_72(text)


def _check_tajima_72(text: str) -> None:
    per_set = table_with(text, "sign − conv.")
    diffs = [r["sign − conv."] for r in per_set]
    here = bullet(text, "Here: the mean AUC difference")
    found = re.search(r"per data set is (\S+) to (\S+);", here)
    assert found and float(found[1]) == min(map(float, diffs)) and float(found[2]) == max(map(float, diffs)), here
    assert found[1] in diffs and found[2] in diffs, here
    wins = sum(int(r["W/T/L"].split("/")[0]) for r in per_set)
    ties = sum(int(r["W/T/L"].split("/")[1]) for r in per_set)
    losses = sum(int(r["W/T/L"].split("/")[2]) for r in per_set)
    assert (f"over all {wins + ties + losses} splits the sign-constrained model is better on {wins}, equal on "
            f"{ties} and worse on {losses}") in here, here
    paper = bullet(text, "The paper (Table 1)")
    t1 = table_with(text, "class")
    gains = [round(float(r["sign-constrained"].split()[0]) - float(r["conventional"].split()[0]), 3) for r in t1]
    assert f"on {sum(g > 0 for g in gains)} of {len(gains)} classes, by {min(gains):.3f}–{max(gains):.3f}" in paper
    per_lambda = next(t for t in tables(text) if t and "model" in t[0] and "data" in t[0])
    weak = {"conventional": 0, "sign": 0}
    for r in per_lambda:
        means = [float(v.split()[0]) for k, v in r.items() if k.startswith("λ = ")]
        weak[r["model"]] += max(means[:3]) >= max(means)
    reg = bullet(text, "Regularization:")
    d = len(per_set)
    assert f"here for {weak['conventional']} of {d} data sets (conventional) and {weak['sign']} of {d}" in reg, reg


# ------------------------------------------------------------------ Woolnough et al. (2022)
def check_woolnough(page: str, block: str = "woolnough2022 default") -> None:
    text = generated(page, block)
    rows = table_with(text, "Fit Time CPU (s)")
    claims = table_with(text, "claim")
    details = table_with(text, "points at the best CV Acc")
    by = {(r["Dataset"], r["Model"]): r for r in rows}
    for rob in ("Ball-SVM", "Box-SVM"):
        beat = [c for c in claims if c["claim"] == f"{rob} beats SVM in test accuracy"]
        fewer = [c for c in claims if c["claim"] == f"{rob} selects fewer features than SVM"]
        if not beat:
            continue
        s = bullet(text, f"{rob} against SVM:")
        diffs = [int(c["by"].split()[0]) for c in beat]
        lo, hi = f"{min(diffs):+d}", f"{max(diffs):+d}"
        assert f"higher test accuracy on {count(beat, 'holds')} of {len(beat)} data sets" in s, s
        assert f"(differences {lo if lo == hi else f'{lo} to {hi}'} test samples)" in s, s
        assert f"fewer selected features on {count(fewer, 'holds')} of {len(fewer)}" in s, s
    top = [c for c in claims if c["claim"] == "Box-SVM has the highest test accuracy"]
    if top:
        assert f"(ties included) on {count(top, 'holds')} of {len(top)}" in bullet(text, "Box-SVM has the highest")
    for model, label in (("Box-pq-SVM", "the converged Box-pq-SVM fit"),
                         ("Box-pq-SVM (paper's iteration)", "the paper's 1000-iteration Box-pq-SVM fit")):
        sets = [d for d, m in by if m == model]
        if not sets:
            continue
        s = bullet(text, f"Fit time (CPU): {label}")
        pq = [by[(d, model)]["Fit Time CPU (s)"] for d in sets]
        conic = [min((by[(d, m)]["Fit Time CPU (s)"] for m in ("Ball-SVM", "Box-SVM")), key=float) for d in sets]
        faster = sum(float(p) < float(c) for p, c in zip(pq, conic, strict=True))

        def rng(cells):
            r = span(cells)
            return r.replace("–", " to ")

        assert f"takes {rng(pq)} s against {rng(conic)} s" in s and f"faster on {faster} of {len(sets)}" in s, s
    for d in details:
        ties = int(d["points at the best CV Acc"])
        if ties > 1:
            s = bullet(text, f"{d['Dataset']} {d['Model']}:")
            features = by[(d["Dataset"], d["Model"])]["Features"].replace("/", " of ")
            assert f"{ties} grid points share the best CV accuracy, {d['CV Acc']} %" in s, s
            assert f"the {features} features it keeps" in s, s
    assert sum("grid points share" in b for b in bullets(text)) == sum(
        int(d["points at the best CV Acc"]) > 1 for d in details)


# ------------------------------------------------------------------ Sha et al. (2002)
def check_sha(page: str) -> None:
    text = generated(page, "robustsvm reproduce sha2002")
    t1 = table_with(text, "Polynomial k = 4")
    rows = {r["data"]: r for r in t1}
    kernels = [k for k in t1[0] if k != "data"]
    shares = {r["data"]: r for r in tables(text)[1]}

    def cells(data):
        out = []
        for k in kernels:
            m, rest = rows[data][k].split(" ± ")
            sd, paper = rest.split(" [")
            out.append((m, sd, paper.rstrip("]")))
        return out

    so = cells("Sonar")
    s = bullet(text, "Sonar (")
    assert f"mean errors {span([m for m, _, _ in so])} %" in s, s
    assert f"(standard deviations {span([sd for _, sd, _ in so])} points)" in s, s
    above = [f"{float(m) - float(p):.1f}" for m, _, p in so]
    assert f"points), {span(above)} points above the paper's" in s, s
    best = max(int(shares["Sonar"][k].split(": ")[1].rstrip(" %")) for k in kernels)
    assert f"at most {best} % of the halves" in s, s
    order = bullet(text, "Sonar kernel order:")
    means = [float(m) for m, _, _ in so]
    papers = [float(p) for _, _, p in so]
    assert f"best here {kernels[means.index(min(means))]} ({min(means):.1f} %)" in order, order
    assert f"in the paper {kernels[papers.index(min(papers))]} ({min(papers)} %)" in order, order
    assert f"worst here {kernels[means.index(max(means))]} ({max(means):.1f} %)" in order, order
    bc = cells("Breast cancer")
    s = bullet(text, "Breast cancer (")
    close = [k for k, (m, sd, p) in zip(kernels, bc, strict=True) if abs(float(m) - float(p)) <= float(sd) + 1e-9]
    assert f"for {len(close)} of {len(kernels)} kernels ({', '.join(close) or 'none'})" in s, s
    bshares = [shares["Breast cancer"][k].split(": ")[1] for k in kernels]
    lo, hi = min(bshares, key=lambda v: float(v.rstrip(" %"))), max(bshares, key=lambda v: float(v.rstrip(" %")))
    assert f"; {lo if lo == hi else f'{lo}–{hi}'} of the splits" in s, s
    p6 = table_with(text, "variant")
    s = bullet(text, "Polynomial k = 6 on breast cancer:")
    m6 = [r["mean % ± sd"].split(" ± ")[0] for r in p6]
    assert f"the Table 1 protocol gives {m6[0]} %" in s and f"means are {span(m6)} %" in s, s
    assert f"with {p6[0]['splits ≤ 5 errors']} splits at 5 errors" in s, s
    fig = {r["updates"]: r for r in table_with(text, "updates")}
    steps = [k for k in fig["ε_t (%)"] if k != "updates"]
    zero = next((k for k in steps if fig["ε_t (%)"][k] == "0.0"), None)
    s = bullet(text, "Fig. 1:")
    assert f"reaches 0.0 % after {zero}" in s and f"the test error is {fig['ε_g (%)'][steps[-1]]} %" in s, s
    th = table_with(text, "quantity over the non-support coefficients")

    def quantity(label):
        return next(r for r in th if r["quantity over the non-support coefficients"].startswith(label))

    s = bullet(text, "Theorem 2")
    g, b = quantity("γ_i, eq. (8) at α*"), quantity("bound, eq. (9)")
    one_g, one_b = quantity("1 − γ_i"), quantity("1 − bound")
    for e in (f"γ_i lies in {g['min']}–{g['max']}", f"the bound in {b['min']}–{b['max']}",
              f"1 − bound of {one_b['min']}–{one_b['max']}", f"1 − γ_i is {one_g['min']}–{one_g['max']} "
              f"(median {one_g['median']})", f"against a median γ_i of {g['median']}"):
        assert e in s, (e, s)
    copies = table_with(text, "aspect-angle marks")
    s = bullet(text, "Offline sonar copies:")
    assert f"{len(copies)} file(s) in the installed packages, {count(copies, 'aspect-angle marks')} with" in s, s
