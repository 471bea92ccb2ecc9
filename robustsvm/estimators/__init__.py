"""The scikit-learn front: the estimator, one-vs-rest over binary models, Platt scaling."""
