"""Helpers of scripts/bench.py: fresh filesystems (freshfs), the creation floor (floor), the targets table and
the regression baseline (report)."""
