from rlpapers.cli import main

main()
