"""Files on disk, handled without trusting them: atomic writes, careful reads of regular
files, nesting depth checked before a parser sees the text, and safe YAML."""
