"""What the golden scripts share: running a tool, ffprobe's JSON, its numbers and hex dumps."""

import json
import subprocess


def run(cmd, stderr_is_error=False):
    """The tool's stdout; exits on a failure (or, when asked, on anything on stderr)."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0 or (stderr_is_error and p.stderr.strip()):
        raise SystemExit("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.decode(errors="replace")))
    return p.stdout


def probe(path, *args, stderr_is_error=False):
    return json.loads(run(["ffprobe", "-v", "error", "-of", "json"] + list(args) + [path], stderr_is_error))


def num(v, conv=int):
    """An ffprobe field as a number; None for a missing or N/A one."""
    return None if v in (None, "N/A") else conv(v)


def dump_to_hex(dump):
    """ffprobe's `-show_data` hex dump (offset, hex words, text) as one hex string."""
    return "".join(line.split(": ", 1)[1][:39].replace(" ", "") for line in (dump or "").strip().splitlines())
