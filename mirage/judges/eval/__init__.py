"""Judge evaluation: gold sets, agreement with them, and the quality figures a report or board carries."""
