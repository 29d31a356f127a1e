"""`python -m surveyctl` runs the command line."""

from surveyctl.cli.main import main

main()
