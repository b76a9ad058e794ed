"""Pipeline stages: plain async functions that take a ChatModel and return frozen results."""
