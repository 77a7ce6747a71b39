"""`python -m mirage` = the `mirage` CLI (used by workflow rules, so conda/container envs need no install of the project)."""

from mirage.cli import main

main()
