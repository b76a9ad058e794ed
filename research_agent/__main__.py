"""``python -m research_agent`` runs the CLI, like the ``research-agent`` script."""

from .cli import main

if __name__ == "__main__":
    main()
