"""`mirage label`: violence labels, C3 decisions, CoT pathway tags, refusals and errors per generation."""
