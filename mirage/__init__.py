"""MIRAGE: an evaluation harness for anti-Muslim bias in LLMs under deployment-realistic conditions."""

__version__ = "0.1.0"
