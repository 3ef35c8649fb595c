"""The schema tests' one way to get jsonschema.

Without it a test is skipped (exit 77, which CTest reports as skipped, never as passed) where a
machine cannot install it (the H200 the project is checked on has no network), and fails on CI
(CI=true), which installs it: a check CI skipped would look like one it ran.
"""
import os
import sys


def jsonschema_or_skip(what):
    try:
        import jsonschema
        return jsonschema
    except ImportError:
        on_ci = os.environ.get("CI") == "true"
        print(f"{what}: not checked: jsonschema is not installed (apt-get install python3-jsonschema, "
              f"or pip install jsonschema){'; on CI that is a failure' if on_ci else ''}")
        sys.exit(1 if on_ci else 77)
