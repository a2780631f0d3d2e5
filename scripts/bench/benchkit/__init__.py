"""Helpers of scripts/bench/bench.py: fresh filesystems (freshfs), the creation floor (floor), the targets table and
the regression baseline (report)."""
