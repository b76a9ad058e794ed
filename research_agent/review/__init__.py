"""Review: deterministic lint plus the skeptic's findings, as one list of issues."""
