# SPDX-License-Identifier: MIT
"""The homa Python package: /usr/bin/python3 -m pip install --no-build-isolation ./python
(after `make`; homa_build.py says where libhoma is looked for)."""
from setuptools import setup

setup(
    name="homa",
    version="0.1.0",
    description="Python binding (with asyncio) of the userspace Homa transport",
    license="MIT",
    python_requires=">=3.9",
    packages=["homa"],
    package_data={"homa": ["py.typed"]},
    cffi_modules=["homa_build.py:ffibuilder"],
    # Run time needs only _cffi_backend (Debian: python3-cffi-backend);
    # no install_requires, so that pip --target never looks for it online.
    zip_safe=False,
)
