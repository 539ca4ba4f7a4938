"""The `oomwhy` command of the wheel: the Rust CLI, compiled into the
native module, with the process's signals as the native binary has them."""

import signal
import sys

from . import _oomwhy


def main() -> None:
    # Python turns Ctrl-C into KeyboardInterrupt, which Rust code never
    # sees; give SIGINT back its default so that `--follow` and `run` stop
    # on Ctrl-C exactly like the native binary.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    code = _oomwhy.run_cli(["oomwhy", *sys.argv[1:]])
    sys.exit(code)


if __name__ == "__main__":
    main()
