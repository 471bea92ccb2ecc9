"""The package's own certificates.

The Lagrangian bound and its dual scale, the certificate of a given point, the first-order iteration bounds.
"""
