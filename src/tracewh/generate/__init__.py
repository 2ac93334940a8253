"""Synthetic profile generators whose true numbers are known (test fixtures and benchmarks)."""
