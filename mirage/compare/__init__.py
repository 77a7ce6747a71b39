"""`mirage compare`, `mirage over-time` and `mirage judges`: paired comparisons of two runs, a model family over time, one run under several judges (docs/compare.md)."""
