#!/usr/bin/env python3
"""Summarize rl-audit log shards as Ray tasks (see rl_audit_ray/__init__.py).

    python integrations/ray/summarize.py --out DIR [--shards N] [--bin PATH]
        [--address RAY-ADDRESS] PATH… [-- RL-AUDIT-ARGS…]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from rl_audit_ray import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
