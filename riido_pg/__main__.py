from riido_pg.cli import main

main()
