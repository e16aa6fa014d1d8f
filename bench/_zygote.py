"""Entry point of a zygote process: ``python -m bench._zygote FD`` (see :mod:`bench.sandbox`)."""

import errno
import sys

from bench import sandbox

try:
    sandbox._zygote_main(int(sys.argv[1]))
except (KeyboardInterrupt, BrokenPipeError, ConnectionError):
    sandbox._cleanup_and_exit()
except OSError as exc:
    if exc.errno in (errno.EPIPE, errno.ECONNRESET):
        sandbox._cleanup_and_exit()
    raise
