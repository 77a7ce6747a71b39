"""`mirage render`: turn the corpus into the exact requests each condition sends (C1, C2, C3),
with the time-coupled RAG layer and the mitigation audit (paper §3.3, §3.4, §3.8, App. B, C)."""
