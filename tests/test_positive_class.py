"""Signs that name their class: ``positive_class`` on RobustSVC, Problem and stored solutions."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest

import robustsvm as rs
from robustsvm import RobustSVC
from robustsvm.exceptions import SignDirectionWarning


@pytest.fixture(scope="module")
def wdbc_frame(wdbc):
    X, y01, names = wdbc  # scikit-learn's coding: 1 = benign, 0 = malignant
    frame = pd.DataFrame(X, columns=names)
    malignant = y01 == 0
    free = RobustSVC(l2=0.1).fit(frame, malignant.astype(int))  # oriented to "malignant"
    # features whose unconstrained weight says "evidence for benign": a +1 sign towards malignant binds there
    binding = [names[h] for h in np.argsort(free.coef_[0])[:3]]
    assert np.all(free.coef_[0, [names.index(n) for n in binding]] < -1e-2)
    return frame, malignant, names, binding


def reference_weights(X, towards_positive, signs_vector, l2):
    """The hinge SVM in CVXPY with labels +1 for the class named ``towards_positive`` and w·s ≥ 0."""
    n, d = X.shape
    ypm = np.where(towards_positive, 1.0, -1.0)
    w, b = cp.Variable(d), cp.Variable()
    loss = cp.sum(cp.pos(1 - cp.multiply(ypm, X @ w + b))) / n
    cp.Problem(cp.Minimize(0.5 * l2 * cp.sum_squares(w) + loss), [cp.multiply(signs_vector, w) >= 0]).solve(
        solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return w.value, float(b.value)


LABELINGS = {
    # (label of malignant, label of benign): malignant sorts last in the first pair and first in the second
    "malignant-last": ("malignant", "benign"),
    "malignant-first": ("cancer", "healthy"),
}


@pytest.mark.parametrize("labeling", sorted(LABELINGS))
def test_signs_point_to_the_named_class_whatever_the_label_order(wdbc_frame, labeling):
    frame, malignant, names, binding = wdbc_frame
    m_label, b_label = LABELINGS[labeling]
    y = np.where(malignant, m_label, b_label)
    idx = [names.index(n) for n in binding]
    s = np.zeros(len(names))
    s[idx] = 1
    w_ref, b_ref = reference_weights(frame.to_numpy(), malignant, s, 0.1)  # oriented to malignant
    assert np.all(w_ref[idx] >= -1e-8)
    predictions = {}
    for named, label in (("malignant", m_label), ("benign", b_label)):
        signs = {n: +1 for n in binding} if named == "malignant" else {n: -1 for n in binding}
        with warnings.catch_warnings():
            warnings.simplefilter("error", SignDirectionWarning)  # a named class never warns
            est = RobustSVC(l2=0.1, signs=signs, positive_class=label).fit(frame, y)
        np.testing.assert_array_equal(est.classes_, sorted([m_label, b_label]))
        towards_malignant = 1.0 if est.classes_[1] == m_label else -1.0
        w = towards_malignant * est.coef_[0]
        # "a larger feature is evidence for malignant", said both ways, holds in every labeling
        assert np.all(w[idx] >= -1e-9)
        np.testing.assert_allclose(w, w_ref, atol=1e-6)
        assert est.solution_.status == "optimal" and est.solution_.positive_class == label
        predictions[named] = est.predict(frame)
    np.testing.assert_array_equal(predictions["malignant"], predictions["benign"])
    f_ref = frame.to_numpy() @ w_ref + b_ref
    clear = np.abs(f_ref) > 1e-5
    np.testing.assert_array_equal((predictions["malignant"] == m_label)[clear], f_ref[clear] > 0)
    # the unconstrained fit disagrees with the sign, so the constraint is what made w[idx] ≥ 0
    free = RobustSVC(l2=0.1).fit(frame, y)
    towards = 1.0 if free.classes_[1] == m_label else -1.0
    assert np.all(towards * free.coef_[0, idx] < -1e-2)


def test_unnamed_signs_on_string_labels_warn_once_and_the_summary_says_where_they_point(wdbc_frame):
    frame, malignant, _, binding = wdbc_frame
    y = np.where(malignant, "malignant", "benign")
    with pytest.warns(SignDirectionWarning, match="towards 'malignant'") as record:
        est = RobustSVC(l2=0.1, signs={binding[0]: 1}).fit(frame, y)
    assert sum(issubclass(r.category, SignDirectionWarning) for r in record) == 1
    assert "a +1 sign pushes towards 'malignant' (classes[1]: no positive_class was named)" in (
        est.solution_.summary())
    named = RobustSVC(l2=0.1, signs={binding[0]: 1}, positive_class="benign").fit(frame, y)
    assert "a +1 sign pushes towards 'benign' (named by positive_class)" in named.solution_.summary()
    # {0, 1} and {-1, +1} say which class is positive: no warning; nor without signs
    with warnings.catch_warnings():
        warnings.simplefilter("error", SignDirectionWarning)
        RobustSVC(l2=0.1, signs={binding[0]: 1}).fit(frame, malignant.astype(int))
        RobustSVC(l2=0.1, signs={binding[0]: 1}).fit(frame, np.where(malignant, 1, -1))
        RobustSVC(l2=0.1).fit(frame, y)
    with pytest.warns(SignDirectionWarning, match=r"labels \[1, 2\]"):
        RobustSVC(l2=0.1, signs={binding[0]: 1}).fit(frame, np.where(malignant, 2, 1))


def test_a_positive_class_that_is_not_a_label_is_named():
    X = np.random.default_rng(0).normal(size=(20, 3))
    y = np.array(["a", "b"] * 10)
    with pytest.raises(ValueError, match=r"positive_class='c' is not one of the labels \['a', 'b'\]"):
        RobustSVC(signs=[1, 0, 0], positive_class="c").fit(X, y)
    with pytest.raises(ValueError, match="positive_class=1 is not one of the labels"):
        rs.Problem(penalty=rs.L2(1.0), positive_class=1).solve(X, y)
    with pytest.raises(TypeError, match="positive_class must be a class label"):
        rs.Problem(positive_class=["a"])


def test_problem_solve_names_the_class_and_the_stored_solution_keeps_it(wdbc_frame, tmp_path):
    frame, malignant, names, binding = wdbc_frame
    y = np.where(malignant, "malignant", "benign")
    prob = rs.Problem(penalty=rs.L2(0.1), signs={n: +1 for n in binding})
    sol = prob.solve(frame, y, positive_class="malignant")
    assert prob.positive_class is None and sol.problem.positive_class == "malignant"
    idx = [names.index(n) for n in binding]
    assert np.all(sol.w[idx] >= -1e-9)  # malignant is classes[1]: w is oriented to it
    flipped = rs.Problem(penalty=rs.L2(0.1), signs={n: -1 for n in binding}, positive_class="benign")
    sol_b = flipped.solve(frame, y)
    np.testing.assert_allclose(sol_b.w, sol.w, atol=1e-6)
    # the stored model says which class its signs point to and is re-checked with them
    path = tmp_path / "m.json"
    sol_b.to_json(path, frame, y)
    back = rs.Solution.from_json(path)
    assert back.problem.positive_class == "benign" and back.positive_class == "benign"
    assert rs.validate(back, frame, y).ok
    # the same weights read as "towards malignant" would break the stored signs
    wrong = rs.Solution.from_json(path)
    wrong.problem.positive_class = "malignant"
    assert not rs.validate(wrong, frame, y).ok


def test_grid_search_orients_the_signs_before_the_folds(wdbc_frame):
    frame, malignant, names, binding = wdbc_frame
    y = np.where(malignant, "malignant", "benign")
    idx = [names.index(n) for n in binding]
    prob = rs.Problem(penalty=rs.L2(0.1), signs={n: -1 for n in binding}, positive_class="benign")
    result = rs.grid_search(prob, frame, y, {"l2": [0.1, 1.0]}, cv=3, progress=False)
    assert np.all(result.weights[..., idx] >= -1e-7)  # towards malignant (classes[1]): ≥ 0
