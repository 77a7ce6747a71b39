"""`mirage metrics`: per-model metrics with frame-level cluster statistics, placebo floors and one error budget per model (App. G, revised)."""
