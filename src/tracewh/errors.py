"""Errors a user can act on: one line, naming the object and what to do."""


class TracewhError(Exception):
    """A failure to report as one line, without a traceback."""


class IngestError(TracewhError):
    """A file could not be ingested; the warehouse is unchanged for that file."""

    def __init__(self, path, problem: str, hint: str = ""):
        self.path = str(path)
        self.problem = problem
        self.hint = hint
        text = f"{self.path}: {problem}"
        super().__init__(f"{text} - {hint}" if hint else text)

    def __reduce__(self):  # pickles intact (the default would lose path and hint)
        return (type(self), (self.path, self.problem, self.hint))


class WarehouseBusy(TracewhError):
    pass
