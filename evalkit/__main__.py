import sys

from evalkit.cli.main import main

sys.exit(main())
