"""``python -m arena.cli``: the ``arena`` command, from a checkout without its script."""

from arena.cli import main

if __name__ == "__main__":  # importing the module (doctests walk every one) runs nothing
    main()
