"""The one error of bad input: every reader raises it, naming the file, line and field at fault."""


class DataError(ValueError):
    """Bad input data; the message names the file, line and field at fault."""
