"""The reconciler: live state, manifests and last-applied bodies in, a plan and its effects out.

Foundations: `normalise` (canonical forms for comparison, update bodies from live responses),
`merge` (the three-way merge that builds full-overwrite PUT bodies) and `diff` (field-level
changes and their classification).
"""
