"""`python -m pplx_archiver` runs the `pplx-export` command line."""

from pplx_archiver.cli import main

if __name__ == "__main__":
    main()
