"""Section models of params.yaml, one module per section. They import nothing from the stages:
the stages (and `mirage.params`, which composes them) import them."""
