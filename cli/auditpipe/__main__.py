import sys

from auditpipe.cli import main

sys.exit(main())
