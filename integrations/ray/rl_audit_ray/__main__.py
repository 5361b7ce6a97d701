import sys

from rl_audit_ray import main

sys.exit(main())
