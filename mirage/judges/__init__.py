"""The violence judges (lexicon-v1, parse-v1/v2/v3, LLM judges and juries), their registry, training and evaluation."""
