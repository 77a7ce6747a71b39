"""`mirage judge`: measure a violence judge against gold labels before trusting its V."""
