"""`python -m offprompt` runs the command line."""

from offprompt.cli import main

if __name__ == "__main__":
    main()
