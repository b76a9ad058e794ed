"""Memory: critiques stored as YAML, and the lessons later runs draw from them."""
