"""`mirage report`: the paper's figures and tables, and one self-contained HTML page per slice."""
