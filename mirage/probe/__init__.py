"""Logit-lens probe (paper §5, App. E): per-layer violence-token log-odds on matched focal/control pairs."""
