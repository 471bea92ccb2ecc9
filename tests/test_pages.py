"""The reproduction pages and the benchmarks page say only what their own tables measure.

Each sentence of a page's "Results" / "Reading the results" list that states a number is rebuilt
here from the tables of the generated block it describes, and must appear on the page as written;
the blocks the commands write carry their own sentences, checked by ``tests/_page_checks.py``.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np
import pytest

from tests._page_checks import (
    check_sha,
    check_tajima,
    check_woolnough,
    count,
    generated,
    table_with,
    tables,
)

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = DOCS / "reproductions"

#: phrases that describe the project's history or its targets instead of a measurement
HISTORY = re.compile(r"previous run|earlier run|now reaches|with this version|before the restructuring|\(not met|"
                     r"\(met\)|goal ≥|goal ≤|used before", re.IGNORECASE)


def _page(name: str) -> str:
    return (PAGES / f"{name}.md").read_text(encoding="utf-8")


def _flat(text: str) -> str:
    """The page with its line breaks inside paragraphs and list items joined."""
    return re.sub(r"\n(?=[^\n\-#|<!\[`])", " ", text.replace("\n  ", " "))


def test_docs_describe_measurements_not_history_or_targets():
    hits = [f"{p.relative_to(ROOT)}: {m.group(0)!r}" for p in DOCS.rglob("*.md")
            for m in HISTORY.finditer(p.read_text(encoding="utf-8"))]
    assert not hits, hits
    for fragment in (ROOT / "benchmarks" / "results").glob("*.md"):
        assert not HISTORY.search(fragment.read_text(encoding="utf-8")), fragment


@pytest.mark.parametrize("module", ["tajima2020", "woolnough2022", "sha2002"])
def test_reproductions_write_outside_docs_by_default(module, tmp_path, monkeypatch):
    import importlib

    from robustsvm.reproduce._common import output_paths

    mod = importlib.import_module(f"robustsvm.reproduce.{module}")
    parser = argparse.ArgumentParser()
    mod.add_arguments(parser)
    args = parser.parse_args([])
    monkeypatch.chdir(tmp_path)
    page, figures = output_paths(module, args.output_dir, args.page, getattr(args, "figures", None),
                                 make_figures=False)
    assert page.resolve() == (tmp_path / "reproductions" / f"{module}.md").resolve()
    assert figures.resolve() == (tmp_path / "reproductions" / "figures").resolve()
    assert not list(tmp_path.iterdir())  # nothing written by parsing the options


def test_tajima_page():
    """Every number the page states is rebuilt from the generated block's tables; no results are stated
    outside that block."""
    page = _page("tajima2020")
    check_tajima(page, "tajima2020 results")
    before = page.split("<!-- BEGIN GENERATED: tajima2020 results -->")[0]
    results = before.split("## Results", 1)[1]
    assert not [line for line in results.splitlines() if line.startswith("- ")], results


def test_tajima_paper_tables_on_the_page_are_the_papers():
    from robustsvm.reproduce._tajima2020_page import PAPER_TABLE1, PAPER_TABLE2

    page = _page("tajima2020")
    t1 = table_with(page, "sign-constrained")
    assert [(r["conventional"], r["sign-constrained"]) for r in t1] == [
        (f"{a:.3f} ({sa:.3f})", f"{b:.3f} ({sb:.3f})") for (a, sa), (b, sb) in PAPER_TABLE1.values()]
    t2 = next(t for t in tables(page) if t and "class" in t[0] and "model" in t[0])
    for r in t2:
        cells = [v for k, v in r.items() if k.startswith("λ = ")]
        assert cells == [f"{m:.3f} ({s:.3f})" for m, s in PAPER_TABLE2[r["model"]][int(r["class"])]]
    gains = [round(b - a, 3) for (a, _), (b, _) in PAPER_TABLE1.values()]
    flat = _flat(page)
    assert (f"raise the mean AUC on {sum(x > 0 for x in gains)} of 12 classes, by "
            f"{min(gains):.3f}–{max(gains):.3f}") in flat
    equal = sum(abs(PAPER_TABLE1[c][j][0] - max(v for v, _ in PAPER_TABLE2[m][c])) < 5e-4
                for c in PAPER_TABLE1 for j, m in enumerate(("conventional", "sign")))
    assert f"; {equal} of its 24 Table 1 means equal the largest mean" in flat


def test_woolnough_page():
    page = _page("woolnough2022")
    if "woolnough2022 default WDBC SVM+Ball-SVM" in page:
        check_woolnough(page, "woolnough2022 default WDBC SVM+Ball-SVM")
    flat = _flat(page)
    text = generated(page, "woolnough2022 default")
    if "points at the best CV Acc" in text:  # the block writes its own sentences: none left outside it
        assert not [b for b in page.split("<!-- BEGIN GENERATED")[0].splitlines() if b.startswith("- ")]
        check_woolnough(page, "woolnough2022 default")
        return
    rows = table_with(text, "Fit Time CPU (s)")
    claims = table_with(text, "claim")
    details = table_with(text, "grid solves (not optimal)")
    by = {(r["Dataset"], r["Model"]): r for r in rows}
    sets = list(dict.fromkeys(r["Dataset"] for r in rows))
    for rob in ("Ball-SVM", "Box-SVM"):
        beat = [c for c in claims if c["claim"] == f"{rob} beats SVM in test accuracy"]
        fewer = [c for c in claims if c["claim"] == f"{rob} selects fewer features than SVM"]
        diffs = [int(c["by"].split()[0]) for c in beat]
        assert (f"- {rob} against SVM: higher test accuracy on {count(beat, 'holds')} of {len(beat)} data sets "
                f"(differences {min(diffs):+d} to {max(diffs):+d} test samples), fewer selected features on "
                f"{count(fewer, 'holds')} of {len(fewer)}.") in flat
    top = [c for c in claims if c["claim"] == "Box-SVM has the highest test accuracy"]
    assert f"(ties included) on {count(top, 'holds')} of {len(top)} data sets." in flat

    def cpu(model):
        return [float(by[(d, model)]["Fit Time CPU (s)"]) for d in sets]

    conic = [min(a, b) for a, b in zip(cpu("Ball-SVM"), cpu("Box-SVM"), strict=True)]
    pq, paper = cpu("Box-pq-SVM"), cpu("Box-pq-SVM (paper's iteration)")
    faster = sum(p < c for p, c in zip(pq, conic, strict=True)) + sum(p < c for p, c in zip(paper, conic, strict=True))
    assert (f"takes {min(pq):.3f} to {max(pq):.3f} s against {min(conic):.3f} to {max(conic):.3f} s for the faster of "
            f"Ball-SVM and Box-SVM, and the paper's 1000-iteration fit {min(paper):.3f} to {max(paper):.3f} s: "
            f"faster on {faster} of {len(sets)} data sets either way.") in flat
    pq_rows = [d["grid solves (not optimal)"] for d in details if d["Model"] == "Box-pq-SVM"]
    capped = [int(c.split("(")[1].rstrip(")")) for c in pq_rows]
    solves = {int(c.split()[0]) for c in pq_rows}
    assert f"In the pq grids {min(capped)} to {max(capped)} of the {solves.pop()} solves per data set" in flat


def test_sha_page():
    page = _page("sha2002")
    flat = _flat(page)
    text = generated(page, "robustsvm reproduce sha2002")
    if "## Reading the results" in text:  # the block writes its own sentences: none left outside it
        assert not [b for b in page.split("<!-- BEGIN GENERATED")[0].splitlines() if b.startswith("- ")]
        check_sha(page)
        _check_sha_paper_values(flat, text)
        return
    t1 = {r["data"]: r for r in table_with(text, "Polynomial k = 4")}
    kernels = [k for k in t1["Sonar"] if k != "data"]

    def cell(data, k):
        m, rest = t1[data][k].split(" ± ")
        sd, paper = rest.split(" [")
        return float(m), float(sd), float(paper.rstrip("]"))

    so = [cell("Sonar", k) for k in kernels]
    shares = {r["data"]: r for r in tables(text)[1]}
    assert (f"mean errors {min(m for m, _, _ in so):.1f}–{max(m for m, _, _ in so):.1f} % (standard deviations "
            f"{min(s for _, s, _ in so):.1f}–{max(s for _, s, _ in so):.1f} points), "
            f"{min(m - p for m, _, p in so):.1f}–{max(m - p for m, _, p in so):.1f} points above the paper's") in flat
    best_share = max(int(shares["Sonar"][k].split(": ")[1].rstrip(" %")) for k in kernels)
    assert f"at most {best_share} % of the halves reach the paper's error count" in flat
    means = [m for m, _, _ in so]
    papers = [p for _, _, p in so]
    assert (f"best here {kernels[int(np.argmin(means))]} ({min(means):.1f} %), in the paper "
            f"{kernels[int(np.argmin(papers))]} ({min(papers)} %); worst here {kernels[int(np.argmax(means))]} "
            f"({max(means):.1f} %), in the paper {kernels[int(np.argmax(papers))]} ({max(papers)} %)") in flat
    bc = {k: cell("Breast cancer", k) for k in kernels}
    rbf = [bc[k] for k in kernels if k.startswith("RBF")]
    n_test = int(re.search(r"(\d+) test samples\)", text)[1])
    assert (f"({n_test} test samples, one sample {100 / n_test:.2f} %): polynomial k = 4 gives "
            f"{bc['Polynomial k = 4'][0]:.1f} ± {bc['Polynomial k = 4'][1]:.1f} % (paper "
            f"{bc['Polynomial k = 4'][2]} %), the three RBF kernels {min(m for m, _, _ in rbf):.1f}–"
            f"{max(m for m, _, _ in rbf):.1f} % (paper {rbf[0][2]} %)") in flat
    four = [int(shares["Breast cancer"][k].split(": ")[1].rstrip(" %")) for k in kernels if k != "Polynomial k = 6"]
    assert f"for these four kernels {min(four)}–{max(four)} % of the splits" in flat
    p6 = table_with(text, "variant")
    m6 = [float(r["mean % ± sd"].split(" ± ")[0]) for r in p6]
    low = p6[int(np.argmin(m6))]["variant"]
    k6 = [int(r["splits ≤ 5 errors"].split()[0]) for r in p6]
    assert (f"the Table 1 protocol gives {p6[0]['mean % ± sd'].replace(' ± ', ' ± ')} % against the paper's 3.6 % "
            f"(5 of {n_test}), with {p6[0]['splits ≤ 5 errors']} splits at 5 errors or fewer; the variants' means are "
            f"{min(m6):.1f}–{max(m6):.1f} %, the lowest the normalized kernel ({min(m6):.1f} %), and each variant has "
            f"{min(k6)}–{max(k6)} of") in flat
    assert low.startswith("normalized kernel")
    fig = {r["updates"]: r for r in table_with(text, "updates")}
    steps = [k for k in fig["ε_t (%)"] if k != "updates"]
    zero = next(k for k in steps if fig["ε_t (%)"][k] == "0.0")
    paper_zero = next(k for k in steps if fig["paper ε_t"][k] == "0.0")
    assert (f"reaches 0.0 % after {zero} updates (the paper: {paper_zero}); after {steps[-1]} updates the test error "
            f"is {fig['ε_g (%)'][steps[-1]]} % (the paper: {fig['paper ε_g'][steps[-1]]} %).") in flat
    th = table_with(text, "quantity over the non-support coefficients")

    def q(label):
        return next(r for r in th if r["quantity over the non-support coefficients"].startswith(label))

    g, b, d, run = q("γ_i, eq. (8)"), q("bound, eq. (9)"), q("bound − γ_i"), q("measured decay")
    holds = re.search(r"γ_i ≤ bound for (\d+) of (\d+) non-support coefficients; \|α_i'/δ − γ_i\| ≤ (\S+)\.", text)
    assert (f"the bound holds for {holds[1]} of {holds[2]} non-support coefficients; "
            f"γ_i lies in {g['min']}–{g['max']}, the bound in {b['min']}–{b['max']}, and the bound exceeds γ_i by "
            f"{d['min']}–{d['max']}; one M3 update "
            f"from α* + δ gives γ_i to {holds[3]}; over updates 256–512 the median decay is {run['median']} against "
            f"a median γ_i of {g['median']}.") in flat
    _check_sha_paper_values(flat, text)


def _check_sha_paper_values(flat: str, text: str) -> None:
    """The paper's values in the block's Table 1 and in the prose, and the test-set sizes the prose names."""
    from robustsvm.reproduce.sha2002 import PAPER_TABLE1

    t1 = {r["data"]: r for r in table_with(text, "Polynomial k = 4")}
    for data, key in (("Sonar", "sonar"), ("Breast cancer", "wisconsin")):
        papers = [float(v.split("[")[1].rstrip("]")) for k, v in t1[data].items() if k != "data"]
        assert papers == list(PAPER_TABLE1[key])
    assert "The paper's sonar errors are " + ", ".join(f"{v}" for v in PAPER_TABLE1["sonar"][:-1]) + \
        f" and {PAPER_TABLE1['sonar'][-1]} %" in flat
    either = re.search(r"each value rounded or truncated \[([\d, ]+)\]", text)[1].replace(",", " and")
    assert f"decimal): {either} only" in flat


def test_sha_page_names_the_offline_sonar_copies():
    """The page's list of offline sonar copies is what the search finds, and none marks the aspect-angle split."""
    from robustsvm.reproduce.sha2002 import offline_sonar_copies

    copies = offline_sonar_copies()
    flat = _flat(_page("sha2002"))
    assert copies and not any(c["aspect_angle_marks"] for c in copies)
    for c in copies:
        name = Path(c["file"]).name
        assert f"`{name}`" in flat, name
        if c["rows"] is not None:
            assert f"`{name}` ({c['rows']} rows" in flat


def test_sha_page_states_the_largest_polynomial_gram_entry():
    """(1 + max_i ‖x_i‖²)⁶ on the raw breast-cancer scores, computed here from the data."""
    from robustsvm.datasets import load
    from robustsvm.terms.kernels import Polynomial

    X, _, _ = load("wisconsin")
    largest = float(np.max(Polynomial(6)(X)))
    assert largest == pytest.approx((1 + np.max(np.sum(X * X, axis=1))) ** 6)
    assert f"largest entry of this kernel's Gram matrix is {largest:.1e}" in _flat(_page("sha2002"))
