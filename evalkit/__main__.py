from evalkit.cli.main import run

run()
