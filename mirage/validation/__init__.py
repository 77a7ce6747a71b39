"""`mirage validate`: human spot-validation of the violence labels (paper §3.6 stage 2, App. H)."""
