"""``python -m research_agent`` runs the CLI (the detached critique uses this)."""

from .cli import main

if __name__ == "__main__":
    main()
