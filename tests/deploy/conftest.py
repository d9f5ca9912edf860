# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""make test-deploy: refuse to run as anything but root, loudly."""
import os

import pytest

from deploy_util import SCPROF


def pytest_sessionstart(session):
    if os.geteuid() != 0:
        pytest.exit("the deploy tests run scprof daemon and must run as root",
                    returncode=1)
    if not os.access(SCPROF, os.X_OK):
        pytest.exit(f"scprof binary not found at {SCPROF} (run make, or set "
                    "SCPROF)", returncode=1)
