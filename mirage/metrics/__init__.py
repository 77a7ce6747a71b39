"""`mirage metrics`: per-model metrics with paired, template-stratified bootstrap statistics (App. G)."""
