"""Run the real CLI many times fast: import it once, fork a fresh process per command.

``python forked_cli.py`` reads one JSON request per line (``args``, ``env``, ``cwd``) and
answers one JSON line each (``code``, ``output``): the command ran in a forked child of
this process (its own pid, signal handlers, environment and exit status, as a separate
``zoneproof`` process has) with stdout and stderr captured together. Importing the CLI
(kubernetes client, chaostoolkit...) takes seconds; a fork takes milliseconds.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

from zoneproof.cli import main as cli


def _run(request: dict[str, object]) -> dict[str, object]:
    with tempfile.TemporaryFile() as sink:
        pid = os.fork()
        if pid == 0:  # the child: one zoneproof command
            code = 70
            try:
                os.dup2(sink.fileno(), 1)
                os.dup2(sink.fileno(), 2)
                os.environ.clear()
                os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})
                os.chdir(str(request["cwd"]))
                try:
                    code = cli.main([str(a) for a in list(request["args"])])
                except SystemExit as exc:  # argparse's usage errors
                    code = exc.code if isinstance(exc.code, int) else 1
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        sink.seek(0)
        output = sink.read().decode(errors="replace")
    return {"code": os.waitstatus_to_exitcode(status), "output": output}


def main() -> None:
    """Serve requests from stdin until it closes."""
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        print(json.dumps(_run(json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
