#!/usr/bin/env python3
"""A local HTTP server that misbehaves on demand, for Tonearm's network-streaming tests.

    http_test_server.py [--root DIR] [--port N] [--verbose] [--exit-on-stdin-eof]
    http_test_server.py --self-test

It binds 127.0.0.1 only, prints `PORT <n>` and a newline on stdout, then serves until it is
killed. Every behaviour is chosen per request by the path and the query, so one server serves
every test; Tests/TestServers/README.md has the whole URL language. Python 3 standard library
only. Every response carries `Connection: close`.

`--self-test` starts a server in a thread on a temporary root and checks every behaviour with
urllib and raw sockets; it exits 1 on any failure.
"""

import argparse
import hashlib
import http
import http.server
import json
import os
import posixpath
import re
import select
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

MIME_TYPES = {
    "mp3": "audio/mpeg", "m4a": "audio/mp4", "mp4": "audio/mp4", "aac": "audio/aac",
    "flac": "audio/flac", "ogg": "audio/ogg", "oga": "audio/ogg", "opus": "audio/ogg",
    "wav": "audio/wav", "aif": "audio/aiff", "aiff": "audio/aiff", "caf": "audio/x-caf",
    "pls": "audio/x-scpls", "m3u": "audio/x-mpegurl", "m3u8": "application/vnd.apple.mpegurl",
}
DEFAULT_MIME = "application/octet-stream"

# /live/ defaults; each can be replaced by the query parameter of the same name.
ICY_DEFAULTS = {
    "name": "Tonearm Test Radio", "genre": "Test", "br": "128",
    "description": "A file looped by Tonearm's test server", "url": "http://127.0.0.1/",
}
DEFAULT_TITLE = "Tonearm Test Stream"
CHARSETS = {"utf-8": "utf-8", "utf8": "utf-8", "cp1251": "cp1251", "windows-1251": "cp1251",
            "latin1": "latin-1", "latin-1": "latin-1", "iso-8859-1": "latin-1"}

GARBAGE_BLOCK = 32
LIVE_FILE_LIMIT = 64 << 20  # /live/ holds its file in memory
HLS_FILE_LIMIT = 1 << 20  # /hls/ reads whole playlists (and badkey=1 whole key files)
HANG_SECONDS = 60.0
CHUNK = 64 << 10


def mime_for(path):
    """The Content-Type for a file name, from its extension (any case)."""
    _, dot, ext = path.rpartition(".")
    return MIME_TYPES.get(ext.lower(), DEFAULT_MIME) if dot else DEFAULT_MIME


def garbage(offset, count):
    """`count` bytes of the garbage stream from absolute position `offset`.

    Byte p of the stream is byte p % 32 of SHA-256(b"tonearm-garbage" + (p // 32) as 8 bytes
    little-endian), so any range of it can be computed alone (HTTPTestServer.garbage in Swift
    computes the same bytes)."""
    if count <= 0:
        return b""
    first, last = offset // GARBAGE_BLOCK, (offset + count - 1) // GARBAGE_BLOCK
    blocks = b"".join(hashlib.sha256(b"tonearm-garbage" + k.to_bytes(8, "little")).digest()
                      for k in range(first, last + 1))
    skip = offset - first * GARBAGE_BLOCK
    return blocks[skip:skip + count]


class BadRequest(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Byte sources: what a plain (non-live) response serves. Ranges, drops, pacing and garbage work
# the same way on all of them.

class FileSource:
    def __init__(self, path):
        self.path = path
        self.size = os.path.getsize(path)

    def chunks(self, start, end):
        with open(self.path, "rb") as f:
            f.seek(start)
            at = start
            while at < end:
                data = f.read(min(CHUNK, end - at))
                if not data:  # the file shrank: end early rather than loop
                    return
                at += len(data)
                yield data


class BytesSource:
    def __init__(self, data):
        self.data = bytes(data)
        self.size = len(self.data)

    def chunks(self, start, end):
        for at in range(start, end, CHUNK):
            yield self.data[at:min(at + CHUNK, end)]


class GarbageSource:
    def __init__(self, size):
        self.size = size

    def chunks(self, start, end):
        for at in range(start, end, CHUNK):
            yield garbage(at, min(CHUNK, end - at))


class GarbageOverlay:
    """Another source whose bytes from `offset` on are replaced by the garbage stream."""

    def __init__(self, source, offset):
        self.source, self.offset, self.size = source, offset, source.size

    def chunks(self, start, end):
        at = start
        for data in self.source.chunks(start, end):
            cut = max(0, min(len(data), self.offset - at))
            if cut < len(data):
                data = data[:cut] + garbage(at + cut, len(data) - cut)
            at += len(data)
            yield data


def parse_range(header, size):
    """(start, end) for a satisfiable single range, "unsatisfiable", or None to ignore it
    (absent, malformed, or several ranges: a server may always answer 200)."""
    if header is None:
        return None
    m = re.fullmatch(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", header, re.IGNORECASE)
    if not m or (m.group(1) == "" and m.group(2) == ""):
        return None
    if m.group(1) == "":  # bytes=-K: the last K bytes
        k = int(m.group(2))
        if k == 0 or size == 0:
            return "unsatisfiable"
        return (max(0, size - k), size)
    first = int(m.group(1))
    if m.group(2) != "" and int(m.group(2)) < first:
        return None
    if first >= size:
        return "unsatisfiable"
    last = size - 1 if m.group(2) == "" else min(int(m.group(2)), size - 1)
    return (first, last + 1)


# ---------------------------------------------------------------------------------------------
# HLS (issue 20): /hls/<relpath> serves a playlist under the root rewritten, so that its
# segments come from /files/ with the fault parameters chosen here, a VOD playlist can become
# a live sliding window, and a master passes its query on to its variants.

# Tags that describe the playlist rather than a segment; live mode drops the ones it rewrites.
HLS_PLAYLIST_TAGS = ("#EXTM3U", "#EXT-X-VERSION", "#EXT-X-TARGETDURATION", "#EXT-X-MEDIA-SEQUENCE",
                     "#EXT-X-DISCONTINUITY-SEQUENCE", "#EXT-X-PLAYLIST-TYPE", "#EXT-X-INDEPENDENT-SEGMENTS",
                     "#EXT-X-START", "#EXT-X-ALLOW-CACHE", "#EXT-X-I-FRAMES-ONLY")
HLS_LIVE_DROPS = ("#EXT-X-MEDIA-SEQUENCE", "#EXT-X-DISCONTINUITY-SEQUENCE", "#EXT-X-PLAYLIST-TYPE")
HLS_URI_ATTRIBUTE = re.compile(r'URI="([^"]*)"')
# A live playlist never shows more than this many segments, whatever window= says.
HLS_WINDOW_LIMIT = 1000


def hls_tag(line):
    return line.split(":", 1)[0]


class HLSSegment:
    def __init__(self, uri, extinf, duration, byterange, key, init_map, discontinuity, other):
        self.uri, self.extinf, self.duration = uri, extinf, duration
        self.byterange = byterange  # (length, offset), the offset made explicit, or None
        self.key, self.init_map = key, init_map  # the EXT-X-KEY and EXT-X-MAP lines in force
        self.discontinuity, self.other = discontinuity, other


class HLSMediaPlaylist:
    """A media playlist read line by line (RFC 8216 §4.3), enough to write it out again."""

    def __init__(self, text):
        self.header, self.segments, self.end_list = [], [], False
        self.media_sequence = self.discontinuity_sequence = 0
        key = init_map = extinf = byterange = None
        discontinuity, other, range_end = False, [], {}
        for line in text.splitlines():
            line = line.strip()
            if not line:
                continue
            tag = hls_tag(line)
            if not line.startswith("#"):
                if extinf is None:
                    raise BadRequest("a segment without EXTINF: %r" % line)
                if byterange is not None:
                    length, _, offset = byterange.partition("@")
                    start = int(offset) if offset else range_end.get(line, 0)
                    byterange = (int(length), start)
                    range_end[line] = start + int(length)
                duration = float(extinf.split(":", 1)[1].split(",", 1)[0])
                self.segments.append(HLSSegment(line, extinf, duration, byterange, key, init_map, discontinuity, other))
                extinf = byterange = None
                discontinuity, other = False, []
            elif tag == "#EXTINF":
                extinf = line
            elif tag == "#EXT-X-BYTERANGE":
                byterange = line.split(":", 1)[1]
            elif tag == "#EXT-X-KEY":
                key = line
            elif tag == "#EXT-X-MAP":
                init_map = line
            elif tag == "#EXT-X-DISCONTINUITY":
                discontinuity = True
            elif tag == "#EXT-X-ENDLIST":
                self.end_list = True
            elif tag in HLS_PLAYLIST_TAGS:
                if tag == "#EXT-X-MEDIA-SEQUENCE":
                    self.media_sequence = int(line.split(":", 1)[1])
                elif tag == "#EXT-X-DISCONTINUITY-SEQUENCE":
                    self.discontinuity_sequence = int(line.split(":", 1)[1])
                self.header.append(line)
            elif line.startswith("#EXT"):
                other.append(line)  # EXT-X-PROGRAM-DATE-TIME and the like, kept with the segment
        if not self.segments:
            raise BadRequest("a media playlist without segments")


def hls_numbers(text, name):
    """`I,J,…` as a set of whole numbers."""
    if not text:
        return set()
    if not re.fullmatch(r"\d+(,\d+)*", text):
        raise BadRequest("%s=%r is not a list like 1,3" % (name, text))
    return {int(x) for x in text.split(",")}


def hls_pairs(text, name):
    """`I:N,J:M,…` as a dict {I: N}."""
    if not text:
        return {}
    if not re.fullmatch(r"\d+:\d+(,\d+:\d+)*", text):
        raise BadRequest("%s=%r is not a list like 2:1000" % (name, text))
    return {int(a): int(b) for a, b in (pair.split(":") for pair in text.split(","))}


# ---------------------------------------------------------------------------------------------

class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64  # tests may open many connections at once (resumes, parallel fetches)

    def __init__(self, port, root, verbose=False):
        self.root = os.path.realpath(root)
        self.verbose = verbose
        self.lock = threading.Lock()
        self.log = []
        self.first_seen = set()
        self.counts = {}
        self.clocks = {}
        super().__init__(("127.0.0.1", port), Handler)

    def server_bind(self):
        # HTTPServer.server_bind asks DNS for the host's name; a sandbox may take seconds to say no.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = "127.0.0.1", self.server_address[1]

    def handle_error(self, request, client_address):
        if self.verbose:
            super().handle_error(request, client_address)

    def record(self, entry):
        with self.lock:
            self.log.append(entry)

    def take_log(self, clear):
        with self.lock:
            entries = list(self.log)
            if clear:
                self.log.clear()
            return entries

    def count(self, key):
        """How many times `key` (a path with its query) has been asked for, this time included."""
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + 1
            return self.counts[key]

    def clock(self, key):
        """Seconds since `key` (a live playlist's clock) was first asked for."""
        now = time.monotonic()
        with self.lock:
            return now - self.clocks.setdefault(key, now)

    def is_first(self, key):
        """True the first time `key` (a path with its query) is asked for."""
        with self.lock:
            if key in self.first_seen:
                return False
            self.first_seen.add(key)
            return True


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "TonearmTestServer/1"
    timeout = 120  # a client that stops reading does not hold a thread for ever

    def log_message(self, format, *args):
        if self.server.verbose:
            super().log_message(format, *args)

    def do_GET(self):
        self.dispatch(head=False)

    def do_HEAD(self):
        self.dispatch(head=True)

    # -- plumbing -----------------------------------------------------------------------------

    def dispatch(self, head):
        self.close_connection = True
        self.head = head
        split = urllib.parse.urlsplit(self.path)
        path = split.path
        self.raw_query = split.query
        self.query = {k: v[0] for k, v in urllib.parse.parse_qs(split.query, keep_blank_values=True).items()}
        if path != "/log":
            entry = {"method": self.command, "path": self.path}
            for name in ("Range", "Icy-MetaData", "User-Agent"):
                if self.headers.get(name) is not None:
                    entry[name] = self.headers.get(name)
            self.server.record(entry)
        try:
            try:
                self.route(path)
            except BadRequest as e:
                self.send_text(400, "bad request: %s\n" % e)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError):
            pass  # the client went away: nothing to tell anyone

    def route(self, path):
        if not path.startswith("/"):
            raise BadRequest("the path must start with /")
        parts = path.split("/")  # "", first, ...
        first = parts[1]
        if first == "files" and len(parts) > 2:
            self.serve_file(urllib.parse.unquote("/".join(parts[2:])))
        elif first == "live" and len(parts) > 2:
            self.serve_live(urllib.parse.unquote("/".join(parts[2:])))
        elif first == "hls" and len(parts) > 2:
            self.serve_hls(urllib.parse.unquote("/".join(parts[2:])))
        elif first in ("redirect", "redirect301") and len(parts) > 3:
            self.serve_redirect(302 if first == "redirect" else 301, parts[2], "/".join(parts[3:]))
        elif path == "/redirect-loop":
            self.send_redirect(302, self.path)
        elif first == "redirect-abs" and len(parts) > 2:
            self.send_redirect(302, "http://127.0.0.1:%d/%s" % (self.server.server_port, self.rest(parts[2:])))
        elif path == "/redirect-to":
            target = self.query.get("url")
            if not target:
                raise BadRequest("/redirect-to needs url=U")
            self.send_redirect(302, target)
        elif first == "status" and len(parts) == 3:
            self.serve_status(parts[2])
        elif path == "/garbage":
            size = self.qint("size")
            if size is None:
                raise BadRequest("/garbage needs size=N")
            self.serve_source(GarbageSource(size), "audio/mpeg")
        elif path in ("/playlist.pls", "/playlist.m3u", "/playlist.m3u8"):
            self.serve_playlist(path)
        elif path == "/log":
            entries = self.server.take_log(clear=self.query.get("clear") == "1")
            self.send_text(200, json.dumps(entries, ensure_ascii=False) + "\n", "application/json")
        else:
            self.send_text(404, "not found: %s\n" % path)

    def rest(self, parts):
        """The rest of a path (still percent-encoded) with the request's query."""
        rest = "/".join(parts)
        return rest + ("?" + self.raw_query if self.raw_query else "")

    def qint(self, name, default=None):
        value = self.query.get(name)
        if value is None:
            return default
        if not re.fullmatch(r"\d+", value):
            raise BadRequest("%s=%r is not a whole number" % (name, value))
        return int(value)

    def qfloat(self, name):
        value = self.query.get(name)
        if value is None:
            return None
        try:
            number = float(value)
        except ValueError:
            raise BadRequest("%s=%r is not a number" % (name, value))
        if not 0 <= number <= 3600:
            raise BadRequest("%s=%r is out of range" % (name, value))
        return number

    def write_head(self, status_line, headers, tight_icy=False):
        """Writes the status line and headers raw (http.server's send_response can only
        write `<protocol_version> <code> <reason>`, and /live/ needs `ICY 200 OK`)."""
        out = [status_line.encode("latin-1")]
        for name, value in headers:
            if value is None:
                continue
            if isinstance(value, int):
                value = str(value)
            # Icecast 2.4 writes its icy- headers with no space after the colon (icynospace=1).
            colon = b":" if tight_icy and name.startswith("icy-") else b": "
            out.append(name.encode("latin-1") + colon + (value if isinstance(value, bytes) else value.encode("utf-8")))
        out.append(b"Connection: close")
        self.wfile.write(b"\r\n".join(out) + b"\r\n\r\n")

    def status_line(self, code):
        try:
            reason = http.HTTPStatus(code).phrase
        except ValueError:
            reason = "Status %d" % code
        return "HTTP/1.1 %d %s" % (code, reason)

    def send_text(self, code, text, content_type="text/plain; charset=utf-8", extra=()):
        body = text.encode("utf-8")
        self.write_head(self.status_line(code),
                        [("Content-Type", content_type), ("Content-Length", len(body))] + list(extra))
        if not self.head:
            self.wfile.write(body)

    def send_redirect(self, code, location):
        self.send_text(code, "see %s\n" % location, extra=[("Location", location)])

    def wait_for_client_to_close(self):
        """hang=1: nothing more is sent; returns when the client closes (or after 60 s)."""
        deadline = time.monotonic() + HANG_SECONDS
        sock = self.connection
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            readable, _, _ = select.select([sock], [], [], left)
            if readable:
                try:
                    if not sock.recv(4096):
                        return
                except OSError:
                    return

    def drop_limit(self):
        """How many body bytes this response may send before the socket closes (None: all)."""
        limits = []
        drop = self.qint("drop")
        if drop is not None:
            limits.append(drop)
        drop_first = self.qint("dropfirst")
        if drop_first is not None and not self.head and self.server.is_first(self.path):
            limits.append(drop_first)
        return min(limits) if limits else None

    def send_body(self, chunks, limit, rate):
        """Writes the chunks, stopping after `limit` bytes, at most `rate` bytes a second (in
        20 writes a second). Returns when done; the caller's return closes the socket."""
        if limit == 0:
            return
        sent = 0
        piece = max(1, rate // 20) if rate else CHUNK
        started = time.monotonic()
        for data in chunks:
            for at in range(0, len(data), piece):
                part = data[at:at + piece]
                if limit is not None and sent + len(part) > limit:
                    part = part[:limit - sent]
                self.wfile.write(part)
                sent += len(part)
                if limit is not None and sent >= limit:
                    return
                if rate:
                    wait = started + sent / rate - time.monotonic()
                    if wait > 0:
                        time.sleep(wait)

    # -- endpoints ----------------------------------------------------------------------------

    def resolve(self, relpath):
        """The path of a regular file under the root, or None after answering 403/404."""
        if ".." in relpath.split("/") or "\0" in relpath:
            self.send_text(403, "no .. in paths\n")
            return None
        path = os.path.realpath(os.path.join(self.server.root, relpath.lstrip("/")))
        if not (path == self.server.root or path.startswith(self.server.root + os.sep)) or not os.path.isfile(path):
            self.send_text(404, "no such file: %s\n" % relpath)
            return None
        return path

    def content_type(self, default):
        """Content-Type for a response: `type=` overrides, `type=` empty leaves it out."""
        if "type" in self.query:
            return self.query["type"] or None
        return default

    def serve_file(self, relpath):
        path = self.resolve(relpath)
        if not path:
            return
        # The HLS fault parameters (the /hls/ route writes them into segment and key URIs).
        status = self.query.get("status")
        if status is not None:
            self.serve_status(status)
            return
        fail_first = self.qint("failfirst")
        if fail_first and not self.head and self.server.count(self.path) <= fail_first:
            self.send_text(500, "failing on purpose (failfirst=%d)\n" % fail_first)
            return
        if self.query.get("badkey") == "1":
            key = self.read_whole(relpath, HLS_FILE_LIMIT, "a badkey=1 file")
            self.serve_source(BytesSource(bytes(b ^ 0xFF for b in key)), mime_for(path))
            return
        self.serve_source(FileSource(path), mime_for(path))

    def serve_source(self, source, default_type):
        garbage_from = self.qint("garbage")
        if garbage_from is not None:
            source = GarbageOverlay(source, garbage_from)
        limit, rate = self.drop_limit(), self.qint("trickle")
        norange = self.query.get("norange") == "1"
        nolength = self.query.get("nolength") == "1"
        delay = self.qfloat("delay")
        if delay:
            time.sleep(delay)
        size = source.size
        span = None if norange else parse_range(self.headers.get("Range"), size)
        if span == "unsatisfiable":
            self.send_text(416, "range not satisfiable\n", extra=[("Content-Range", "bytes */%d" % size)])
            return
        start, end = span or (0, size)
        headers = [("Content-Type", self.content_type(default_type))]
        if not nolength:
            headers.append(("Content-Length", end - start))
        if not norange:
            headers.append(("Accept-Ranges", "bytes"))
        if span:
            headers.append(("Content-Range", "bytes %d-%d/%d" % (start, end - 1, size)))
        self.write_head(self.status_line(206 if span else 200), headers)
        if self.head:
            return
        if self.query.get("hang") == "1":
            self.wait_for_client_to_close()
            return
        self.send_body(source.chunks(start, end), limit, rate)

    def serve_redirect(self, code, count, rest):
        if not re.fullmatch(r"\d+", count):
            raise BadRequest("redirect count %r is not a whole number" % count)
        n = int(count)
        prefix = "/redirect/" if code == 302 else "/redirect301/"
        target = "/" + rest if n == 0 else "%s%d/%s" % (prefix, n - 1, rest)
        self.send_redirect(code, target + ("?" + self.raw_query if self.raw_query else ""))

    def serve_status(self, text):
        if not re.fullmatch(r"\d{3}", text) or not 200 <= int(text) <= 599:
            raise BadRequest("status %r is not a code from 200 to 599" % text)
        code = int(text)
        if code in (204, 304):  # these have no body, and 204 no Content-Length either
            self.write_head(self.status_line(code), [])
            return
        self.send_text(code, self.status_line(code)[len("HTTP/1.1 "):] + "\n")

    def serve_playlist(self, path):
        target = self.query.get("target")
        if not target:
            raise BadRequest("a playlist needs target=<path>")
        base = "http://127.0.0.1:%d/" % self.server.server_port
        url, dummy = base + target.lstrip("/"), base + "status/404"
        title = self.query.get("title", DEFAULT_TITLE)
        if path.endswith(".pls"):
            text = ("[playlist]\nNumberOfEntries=2\nFile1=%s\nTitle1=%s\nLength1=-1\n"
                    "File2=%s\nTitle2=Dummy second entry\nLength2=-1\nVersion=2\n") % (url, title, dummy)
        else:
            text = "#EXTM3U\n#EXTINF:-1,%s\n%s\n#EXTINF:-1,Dummy second entry\n%s\n" % (title, url, dummy)
        self.serve_source(BytesSource(text.encode("utf-8")), mime_for(path))

    def read_whole(self, relpath, limit, what):
        """The bytes of a file under the root that a route holds in memory (None after 403/404)."""
        path = self.resolve(relpath)
        if not path:
            return None
        if os.path.getsize(path) > limit:
            raise BadRequest("%s may have at most %d bytes" % (what, limit))
        with open(path, "rb") as f:
            return f.read()

    def serve_live(self, relpath):
        audio = self.read_whole(relpath, LIVE_FILE_LIMIT, "a /live/ file")
        if audio is None:
            return
        loops = self.qint("loops")
        charset = CHARSETS.get(self.query.get("charset", "utf-8").lower())
        if charset is None:
            raise BadRequest("charset must be utf-8, cp1251 or latin1")
        metaint = self.qint("metaint")
        if (self.headers.get("Icy-MetaData") or "").strip() != "1" or not metaint:
            metaint = None
        titles = self.query.get("titles", DEFAULT_TITLE).split("|")
        title_every = self.qint("titleevery") or len(audio) or 1
        stream_url = self.query.get("streamurl", "")
        limit, rate = self.drop_limit(), self.qint("rate") or self.qint("trickle")
        delay = self.qfloat("delay")
        if delay:
            time.sleep(delay)

        def icy(name):
            return self.query.get(name, ICY_DEFAULTS[name]).encode(charset, "replace")

        headers = [("Content-Type", self.content_type(mime_for(relpath))),
                   ("icy-name", icy("name")), ("icy-genre", icy("genre")), ("icy-br", icy("br")),
                   ("icy-description", icy("description")), ("icy-url", icy("url")),
                   ("icy-pub", "0"), ("Cache-Control", "no-cache")]
        if metaint:
            headers.append(("icy-metaint", metaint))
        self.write_head("ICY 200 OK" if self.query.get("icyok") == "1" else "HTTP/1.0 200 OK", headers,
                        tight_icy=self.query.get("icynospace") == "1")
        if self.head:
            return
        if self.query.get("hang") == "1":
            self.wait_for_client_to_close()
            return
        body = live_body(audio, loops, metaint, titles, title_every, stream_url, charset)
        self.send_body(body, limit, rate)

    # -- /hls/ -----------------------------------------------------------------------------------

    def serve_hls(self, relpath):
        data = self.read_whole(relpath, HLS_FILE_LIMIT, "an /hls/ playlist")
        if data is None:
            return
        text = data.decode("utf-8", "replace")
        if not text.startswith("#EXTM3U"):
            raise BadRequest("%s is not an M3U8 playlist" % relpath)
        folder = posixpath.dirname(relpath.lstrip("/"))
        if "#EXT-X-STREAM-INF" in text or "#EXT-X-MEDIA:" in text:
            out = self.hls_master(text, folder, relpath.lstrip("/"))
        else:
            out = self.hls_media(HLSMediaPlaylist(text), folder, relpath.lstrip("/"))
        self.serve_source(BytesSource(out.encode("utf-8")), "application/vnd.apple.mpegurl")

    def hls_resolve(self, folder, uri):
        """The root-relative path of a URI relative to the playlist, None for an absolute URL."""
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", uri) or uri.startswith("/"):
            return None
        return posixpath.normpath(posixpath.join(folder, urllib.parse.unquote(uri.split("?", 1)[0])))

    def hls_url(self, route, relpath, params):
        return "/%s/%s%s" % (route, urllib.parse.quote(relpath), "?" + urllib.parse.urlencode(params) if params else "")

    def hls_master(self, text, folder, relpath):
        """Variant and rendition URIs go through /hls/ with this request's query, and with
        master=<this playlist> so that the live variants of one master share one clock."""
        params = [(k, v) for k, v in urllib.parse.parse_qsl(self.raw_query, keep_blank_values=True) if k != "master"]
        params.append(("master", relpath))

        def rewrite(uri, route="hls"):
            target = self.hls_resolve(folder, uri)
            if target is None:
                return uri
            return self.hls_url(route, target, params if route == "hls" else [])

        lines, variant_next = [], False
        for line in text.splitlines():
            stripped = line.strip()
            if stripped and not stripped.startswith("#") and variant_next:
                line, variant_next = rewrite(stripped), False
            elif stripped.startswith("#EXT-X-STREAM-INF"):
                variant_next = True
            elif stripped.startswith(("#EXT-X-MEDIA:", "#EXT-X-I-FRAME-STREAM-INF")):
                line = HLS_URI_ATTRIBUTE.sub(lambda m: 'URI="%s"' % rewrite(m.group(1)), line)
            elif stripped.startswith(("#EXT-X-SESSION-KEY", "#EXT-X-SESSION-DATA")):
                line = HLS_URI_ATTRIBUTE.sub(lambda m: 'URI="%s"' % rewrite(m.group(1), "files"), line)
            lines.append(line)
        return "\n".join(lines) + "\n"

    def hls_media(self, playlist, folder, relpath):
        q = self.query
        missing = hls_numbers(q.get("missing"), "missing")
        fail = hls_pairs(q.get("fail"), "fail")
        slow_applies = q.get("slowvariant") is None or q["slowvariant"] in relpath
        slow = hls_pairs(q.get("slow"), "slow") if slow_applies else {}
        slow_from = hls_pairs(q.get("slowfrom"), "slowfrom") if slow_applies else {}
        if len(slow_from) > 1:
            raise BadRequest("slowfrom=I:B takes one pair")
        # Segment URLs carry a token of this playlist URL, so that each test's failfirst=
        # counters are its own.
        token = hashlib.sha256(self.path.encode("utf-8")).hexdigest()[:8]
        badkey = q.get("badkey") == "1"
        count = len(playlist.segments)
        live = q.get("live") == "1"

        if live:
            window = self.qint("window", 3)
            speed = self.qfloat("speed") or 1.0
            first_sequence = self.qint("seq", 0)
            end_after, stall = self.qint("endafter"), self.qfloat("stall")
            if not 1 <= window <= HLS_WINDOW_LIMIT:
                raise BadRequest("window=%d is not from 1 to %d" % (window, HLS_WINDOW_LIMIT))
            if end_after == 0:
                raise BadRequest("endafter=0 publishes nothing")
            # One clock per stream: a master's variants share theirs (master= names the master).
            clock_params = sorted((k, v) for k, v in urllib.parse.parse_qsl(self.raw_query, keep_blank_values=True)
                                  if k != "master")
            clock_key = (q.get("master") or relpath) + "?" + urllib.parse.urlencode(clock_params)
            elapsed = self.server.clock(clock_key) * speed
            if stall is not None:
                elapsed = min(elapsed, stall)
            numbers, ended = self.hls_live_window(playlist, window, first_sequence, end_after, elapsed)
            sources = [playlist.segments[n % count] for n in numbers]
            discontinuities = [self.hls_live_discontinuity(playlist, n, first_sequence) for n in numbers]
            slid_out = sum(1 for m in range(first_sequence, numbers[0])
                           if self.hls_live_discontinuity(playlist, m, first_sequence))
            lines = [l for l in playlist.header if hls_tag(l) not in HLS_LIVE_DROPS]
            lines += ["#EXT-X-MEDIA-SEQUENCE:%d" % numbers[0],
                      "#EXT-X-DISCONTINUITY-SEQUENCE:%d" % (playlist.discontinuity_sequence + slid_out)]
        else:
            numbers = list(range(count))
            sources, ended = playlist.segments, playlist.end_list
            discontinuities = [s.discontinuity for s in sources]
            lines = list(playlist.header)

        last_key = last_map = None
        for n, segment, discontinuity in zip(numbers, sources, discontinuities):
            if discontinuity:
                lines.append("#EXT-X-DISCONTINUITY")
            key = self.hls_key_line(segment, folder, playlist, n if live else None, badkey)
            if key is not None and key != last_key:
                lines.append(key)
                last_key = key
            if segment.init_map is not None:
                init_map = HLS_URI_ATTRIBUTE.sub(lambda m: 'URI="%s"' % self.hls_plain(folder, m.group(1)),
                                                 segment.init_map)
                if init_map != last_map:
                    lines.append(init_map)
                    last_map = init_map
            if not live:
                lines += segment.other  # a PROGRAM-DATE-TIME would be wrong in the loop
            lines.append(segment.extinf)
            if segment.byterange is not None:
                lines.append("#EXT-X-BYTERANGE:%d@%d" % segment.byterange)
            params = [("seg", n), ("pl", token)]
            if n in missing:
                params.append(("status", 404))
            if n in fail:
                params.append(("failfirst", fail[n]))
            rate = slow.get(n)
            if rate is None and slow_from:
                start, from_rate = next(iter(slow_from.items()))
                rate = from_rate if n >= start else None
            if rate:
                params.append(("trickle", rate))
            target = self.hls_resolve(folder, segment.uri)
            lines.append(segment.uri if target is None else self.hls_url("files", target, params))
        if ended:
            lines.append("#EXT-X-ENDLIST")
        return "\n".join(lines) + "\n"

    def hls_plain(self, folder, uri):
        target = self.hls_resolve(folder, uri)
        return uri if target is None else self.hls_url("files", target, [])

    def hls_key_line(self, segment, folder, playlist, live_number, badkey):
        """The segment's EXT-X-KEY with its URI on /files/ (badkey=1 asks for a wrong key). In a
        live playlist a key without IV gets the IV of the VOD segment's own media sequence
        number (RFC 8216 §5.2), since the live number differs."""
        if segment.key is None:
            return None
        line = HLS_URI_ATTRIBUTE.sub(
            lambda m: 'URI="%s"' % (self.hls_url("files", self.hls_resolve(folder, m.group(1)), [("badkey", 1)])
                                    if badkey and self.hls_resolve(folder, m.group(1)) else
                                    self.hls_plain(folder, m.group(1))), segment.key)
        if live_number is not None and "METHOD=NONE" not in line and "IV=" not in line:
            index = playlist.segments.index(segment)
            line += ",IV=0x%032x" % (playlist.media_sequence + index)
        return line

    @staticmethod
    def hls_live_discontinuity(playlist, n, first_sequence):
        """Live segment n follows a discontinuity: the loop wraps there, or its VOD segment has one."""
        count = len(playlist.segments)
        return (n > first_sequence and n % count == 0) or playlist.segments[n % count].discontinuity

    @staticmethod
    def hls_live_window(playlist, window, first_sequence, end_after, elapsed):
        """The media sequence numbers in the window after `elapsed` seconds of media time, and
        whether the stream has ended. The first `window` segments are there from the start; each
        later one appears once its own EXTINF more has elapsed."""
        durations = [s.duration for s in playlist.segments]
        count, cycle = len(durations), sum(durations)
        if cycle <= 0:
            raise BadRequest("a live playlist needs segments that last")
        last = first_sequence + window - 1
        if cycle > 0 and elapsed > 2 * cycle:  # skip whole loops at once
            loops = int(elapsed // cycle) - 1
            last += loops * count
            elapsed -= loops * cycle
        while True:
            if end_after is not None and last - first_sequence + 1 >= end_after:
                break
            duration = durations[(last + 1) % count]
            if duration > elapsed:
                break
            elapsed -= duration
            last += 1
        ended = end_after is not None and last - first_sequence + 1 >= end_after
        if ended:
            last = first_sequence + end_after - 1
        return list(range(max(first_sequence, last - window + 1), last + 1)), ended


def icy_block(title, stream_url, charset):
    """A metadata block: the length byte L, then L * 16 bytes of text, zero-padded. A text
    longer than 255 * 16 bytes loses the end of its title."""
    if title is None:
        return b"\0"
    head, tail = b"StreamTitle='", ("';StreamUrl='%s';" % stream_url).encode(charset, "replace")
    text = head + title.encode(charset, "replace")[:max(0, 255 * 16 - len(head) - len(tail))] + tail
    text = text[:255 * 16]
    text += b"\0" * (-len(text) % 16)
    return bytes([len(text) // 16]) + text


def live_body(audio, loops, metaint, titles, title_every, stream_url, charset):
    """The chunks of a /live/ body: the file `loops` times (None: for ever); with `metaint`, a
    metadata block after every `metaint` audio bytes. The block after audio byte P carries the
    title of period P // title_every (cycling through `titles`), written out only in the first
    block and when it differs from the previous block's."""
    if not audio:
        return
    position, done_loops, at = 0, 0, 0  # audio bytes sent, whole loops sent, offset in the file
    last_title = None
    while loops is None or done_loops < loops:
        step = len(audio) - at
        if metaint:
            step = min(step, metaint - position % metaint)
        yield audio[at:at + step]
        position += step
        at += step
        if at == len(audio):
            at, done_loops = 0, done_loops + 1
        if metaint and position % metaint == 0:
            title = titles[(position // title_every) % len(titles)]
            yield icy_block(title if title != last_title else None, stream_url, charset)
            last_title = title


def serve(args):
    if not os.path.isdir(args.root):
        print("http_test_server: --root %s is not a directory" % args.root, file=sys.stderr)
        return 2
    server = Server(args.port, args.root, verbose=args.verbose)
    if args.tls:
        # Every connection is TLS; the handshake happens as it is accepted.
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls[0], args.tls[1])
        server.socket = context.wrap_socket(server.socket, server_side=True)
    sys.stdout.write("PORT %d\n" % server.server_port)
    sys.stdout.flush()
    if args.exit_on_stdin_eof:
        # The harness holds our stdin open; when its process ends, even by a crash, we end too.
        def watch():
            while sys.stdin.buffer.read(4096):
                pass
            os._exit(0)
        threading.Thread(target=watch, daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    return 0


# =============================================================================================
# Self-test

class SelfTest:
    def __init__(self):
        self.checks = 0
        self.failures = []

    def check(self, condition, what):
        self.checks += 1
        if not condition:
            self.failures.append(what)
            print("FAIL: %s" % what, file=sys.stderr)
        return condition

    def equal(self, got, expected, what):
        ok = got == expected
        if not ok:
            g, e = repr(got), repr(expected)
            what = "%s: got %s, expected %s" % (what, g[:200], e[:200])
        return self.check(ok, what)


class Response:
    def __init__(self, status_line, headers, body, elapsed_to_head=0.0, head_lines=()):
        self.status_line = status_line
        self.head_lines = list(head_lines)  # the header lines as sent
        self.headers = headers  # lower-case name -> value (str, latin-1)
        self.body = body
        self.elapsed_to_head = elapsed_to_head

    @property
    def status(self):
        parts = self.status_line.split(" ")
        return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


def raw_request(port, target, headers=(), method="GET", timeout=10):
    """Sends a request and reads the response until the server closes the connection."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        lines = ["%s %s HTTP/1.1" % (method, target), "Host: 127.0.0.1:%d" % port] + \
                ["%s: %s" % h for h in headers]
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("utf-8"))
        data = b""
        head_at = None
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if head_at is None and b"\r\n\r\n" in data:
                head_at = time.monotonic() - started
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parsed = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        parsed[name.strip().lower()] = value.strip()
    return Response(lines[0], parsed, body, head_at or 0.0, lines[1:])


def read_head(s):
    """Reads from socket s until the end of a response head (or the close): the bytes so far."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def parse_icy(body, metaint):
    """Audio bytes and metadata blocks (bytes, None for L = 0) of an ICY body."""
    audio, blocks, at = b"", [], 0
    while at < len(body):
        audio += body[at:at + metaint]
        at += metaint
        if at >= len(body):
            break
        length = body[at] * 16
        block = body[at + 1:at + 1 + length]
        blocks.append(block if length else None)
        at += 1 + length
    return audio, blocks


def self_test():
    t = SelfTest()
    root = tempfile.mkdtemp(prefix="tonearm-http-test-")
    try:
        run_self_test(t, root)
    except Exception:  # a check that crashes is a failure like any other
        import traceback
        traceback.print_exc()
        t.check(False, "the self-test raised an exception")
    finally:
        for dirpath, dirnames, filenames in os.walk(root, topdown=False):
            for name in filenames:
                os.unlink(os.path.join(dirpath, name))
            for name in dirnames:
                os.rmdir(os.path.join(dirpath, name))
        os.rmdir(root)
    print("self-test: %d checks, %d failures" % (t.checks, len(t.failures)))
    return 1 if t.failures else 0


def run_self_test(t, root):
    started = time.monotonic()
    body = bytes((i * 7 + (i >> 8)) & 255 for i in range(5000))
    os.makedirs(os.path.join(root, "sub dir"))
    for name, data in (("a.mp3", body), ("sub dir/b.FLAC", body[:100]), ("empty.wav", b""),
                       ("c.bin", body[:10]), ("tone.m4a", body[:64])):
        with open(os.path.join(root, name), "wb") as f:
            f.write(data)
    with open(os.path.join(os.path.dirname(root), os.path.basename(root) + "-outside.mp3"), "wb") as f:
        f.write(b"secret")
    outside = os.path.basename(root) + "-outside.mp3"

    server = Server(0, root)
    port = server.server_port
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def get(target, headers=(), method="GET"):
        return raw_request(port, target, headers, method)

    try:
        # -- Content-Type table ---------------------------------------------------------------
        for name, mime in (("x.mp3", "audio/mpeg"), ("x.M4A", "audio/mp4"), ("x.mp4", "audio/mp4"),
                           ("x.aac", "audio/aac"), ("x.flac", "audio/flac"), ("x.ogg", "audio/ogg"),
                           ("x.oga", "audio/ogg"), ("x.opus", "audio/ogg"), ("x.wav", "audio/wav"),
                           ("x.aif", "audio/aiff"), ("x.aiff", "audio/aiff"), ("x.caf", "audio/x-caf"),
                           ("x.pls", "audio/x-scpls"), ("x.m3u", "audio/x-mpegurl"),
                           ("x.m3u8", "application/vnd.apple.mpegurl"), ("x.xyz", DEFAULT_MIME),
                           ("noext", DEFAULT_MIME)):
            t.equal(mime_for(name), mime, "mime_for(%s)" % name)

        # -- /files/ ----------------------------------------------------------------------------
        r = get("/files/a.mp3")
        t.equal(r.status_line, "HTTP/1.1 200 OK", "plain GET status line")
        t.equal(r.body, body, "plain GET body")
        t.equal(r.headers.get("content-type"), "audio/mpeg", "plain GET Content-Type")
        t.equal(r.headers.get("content-length"), "5000", "plain GET Content-Length")
        t.equal(r.headers.get("accept-ranges"), "bytes", "plain GET Accept-Ranges")
        t.equal(r.headers.get("connection"), "close", "plain GET Connection")
        with urllib.request.urlopen("http://127.0.0.1:%d/files/sub%%20dir/b.FLAC" % port, timeout=10) as u:
            t.equal((u.status, u.headers["Content-Type"], u.read()), (200, "audio/flac", body[:100]),
                    "urllib GET of an escaped path in a subfolder, upper-case extension")
        r = get("/files/tone.m4a")
        t.equal((r.headers.get("content-type"), r.body), ("audio/mp4", body[:64]), "m4a type")
        t.equal(get("/files/c.bin").headers.get("content-type"), DEFAULT_MIME, "unknown extension type")
        r = get("/files/a.mp3", method="HEAD")
        t.equal((r.status, r.headers.get("content-length"), r.headers.get("content-type"), r.body),
                (200, "5000", "audio/mpeg", b""), "HEAD: headers without a body")
        r = get("/files/a.mp3", [("Range", "bytes=0-")], method="HEAD")
        t.equal((r.status, r.headers.get("content-range"), r.body), (206, "bytes 0-4999/5000", b""), "ranged HEAD")
        t.equal(get("/files/missing.mp3").status, 404, "missing file")
        t.equal(get("/files/sub%20dir").status, 404, "a folder is not a file")
        t.equal(get("/files/../" + outside).status, 403, "../ is refused")
        t.equal(get("/files/%2e%2e/" + outside).status, 403, "escaped ../ is refused")
        t.equal(get("/files/sub%20dir/%2E%2E/%2E%2E/" + outside).status, 403, "nested escaped ../ is refused")
        t.equal(get("/nowhere").status, 404, "unknown path")

        # Ranges.
        for header, span in (("bytes=100-", (100, 5000)), ("bytes=10-19", (10, 20)), ("bytes=-30", (4970, 5000)),
                             ("bytes=4990-999999", (4990, 5000)), ("bytes=-99999", (0, 5000)),
                             ("bytes=4999-4999", (4999, 5000)), ("BYTES = 7 - 8", (7, 9))):
            r = get("/files/a.mp3", [("Range", header)])
            t.equal((r.status, r.headers.get("content-range"), r.headers.get("content-length"), r.body),
                    (206, "bytes %d-%d/5000" % (span[0], span[1] - 1), str(span[1] - span[0]), body[span[0]:span[1]]),
                    "Range %s" % header)
        for header in ("bytes=5000-", "bytes=6000-7000", "bytes=-0"):
            r = get("/files/a.mp3", [("Range", header)])
            t.equal((r.status, r.headers.get("content-range")), (416, "bytes */5000"), "unsatisfiable %s" % header)
        r = get("/files/empty.wav", [("Range", "bytes=0-")])
        t.equal((r.status, r.headers.get("content-range")), (416, "bytes */0"), "any range of an empty file")
        r = get("/files/empty.wav")
        t.equal((r.status, r.headers.get("content-length"), r.body), (200, "0", b""), "empty file")
        for header in ("bytes=9-3", "bytes=1-2,5-6", "items=1-2", "bytes=-"):
            r = get("/files/a.mp3", [("Range", header)])
            t.equal((r.status, r.body), (200, body), "ignored Range %s" % header)

        # norange, type, nolength.
        r = get("/files/a.mp3?norange=1", [("Range", "bytes=100-")])
        t.equal((r.status, r.body, "accept-ranges" in r.headers, r.headers.get("content-length")),
                (200, body, False, "5000"), "norange=1 ignores Range and drops Accept-Ranges")
        t.equal(get("/files/a.mp3?type=audio/x-test").headers.get("content-type"), "audio/x-test", "type= override")
        r = get("/files/a.mp3?type=")
        t.equal(("content-type" in r.headers, r.body), (False, body), "type= empty: no Content-Type")
        r = get("/files/a.mp3?nolength=1")
        t.equal(("content-length" in r.headers, r.body), (False, body), "nolength=1: body to the close")
        r = get("/files/a.mp3?nolength=1", [("Range", "bytes=4000-")])
        t.equal((r.status, "content-length" in r.headers, r.body), (206, False, body[4000:]), "nolength=1 with Range")

        # drop: every response stops after N body bytes, so a resuming client needs several tries.
        r = get("/files/a.mp3?drop=1234")
        t.equal((r.status, r.headers.get("content-length"), r.body), (200, "5000", body[:1234]), "drop=1234")
        r = get("/files/a.mp3?drop=0")
        t.equal((r.status, r.headers.get("content-length"), r.body), (200, "5000", b""), "drop=0: headers only")
        got, tries = b"", 0
        while len(got) < len(body) and tries < 20:
            r = get("/files/a.mp3?drop=1500", [("Range", "bytes=%d-" % len(got))] if got else [])
            got += r.body
            tries += 1
        t.equal((got, tries), (body, 4), "drop=1500: four resumes with Range assemble the file")
        r = get("/files/a.mp3?drop=100000")
        t.equal(r.body, body, "drop beyond the end sends everything")
        r = get("/files/a.mp3?drop=10", method="HEAD")
        t.equal((r.status, r.body), (200, b""), "drop with HEAD")

        # dropfirst: only the first response for this exact path and query drops.
        r1, r2, r3 = get("/files/a.mp3?dropfirst=300"), get("/files/a.mp3?dropfirst=300"), get("/files/a.mp3?dropfirst=300")
        t.equal((r1.body, r2.body, r3.body), (body[:300], body, body), "dropfirst=300: first short, later whole")
        r1, r2 = get("/files/a.mp3?dropfirst=300&x=1"), get("/files/a.mp3?dropfirst=300&x=1", [("Range", "bytes=300-")])
        t.equal((r1.body, r2.status, r2.body), (body[:300], 206, body[300:]), "dropfirst counts per path and query")

        # garbage=OFFSET: deterministic, ranged reads agree, same length.
        expected = body[:2000] + garbage(2000, 3000)
        r = get("/files/a.mp3?garbage=2000")
        t.equal((r.headers.get("content-length"), r.body), ("5000", expected), "garbage=2000")
        t.check(expected[2000:] != body[2000:], "garbage differs from the file")
        t.equal(get("/files/a.mp3?garbage=2000").body, expected, "garbage repeats")
        t.equal(get("/files/a.mp3?garbage=2000", [("Range", "bytes=1990-2100")]).body, expected[1990:2101],
                "garbage in a range across the offset")
        t.equal(get("/files/a.mp3?garbage=2000&drop=700", [("Range", "bytes=1500-")]).body, expected[1500:2200],
                "garbage with Range and drop")
        t.equal(garbage(0, 3) + garbage(3, 70), garbage(0, 73), "garbage() pieces join")
        t.equal(garbage(0, 4), hashlib.sha256(b"tonearm-garbage" + bytes(8)).digest()[:4], "garbage() definition")

        # /garbage?size=N.
        r = get("/garbage?size=1000")
        t.equal((r.status, r.headers.get("content-type"), r.headers.get("content-length"), r.body),
                (200, "audio/mpeg", "1000", garbage(0, 1000)), "/garbage?size=1000")
        r = get("/garbage?size=1000", [("Range", "bytes=900-")])
        t.equal((r.status, r.body), (206, garbage(900, 100)), "/garbage with Range")
        t.equal(get("/garbage").status, 400, "/garbage without size")
        t.equal(get("/garbage?size=x").status, 400, "/garbage with a bad size")

        # trickle: lower bounds only (the server sleeps; a slow machine only makes it later).
        before = time.monotonic()
        r = get("/files/a.mp3?trickle=20000")
        elapsed = time.monotonic() - before
        t.equal(r.body, body, "trickle body")
        t.check(elapsed >= (5000 - 1000) / 20000 * 0.95, "trickle=20000 took %.3f s for 5000 bytes" % elapsed)
        before = time.monotonic()
        r = get("/files/a.mp3?trickle=10000&drop=1500")
        t.equal(r.body, body[:1500], "trickle with drop")
        t.check(time.monotonic() - before >= (1500 - 500) / 10000 * 0.95, "trickle with drop paced")

        # delay.
        r = get("/files/c.bin?delay=0.3")
        t.equal(r.body, body[:10], "delay body")
        t.check(r.elapsed_to_head >= 0.29, "delay=0.3: headers after %.3f s" % r.elapsed_to_head)
        t.equal(get("/files/c.bin?delay=x").status, 400, "bad delay")

        # hang: headers, then silence until we close.
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET /files/a.mp3?hang=1 HTTP/1.1\r\nHost: x\r\n\r\n")
            data = read_head(s)
            head, _, rest = data.partition(b"\r\n\r\n")
            t.check(head.startswith(b"HTTP/1.1 200 OK") and b"Content-Length: 5000" in head, "hang=1 sends headers")
            s.settimeout(0.3)
            try:
                more = s.recv(4096)
                t.check(False, "hang=1 sent %r" % more[:20])
            except socket.timeout:
                t.check(rest == b"", "hang=1 sends no body")

        # -- redirects ----------------------------------------------------------------------------
        r = get("/redirect/2/files/a.mp3?x=1&y=2")
        t.equal((r.status, r.headers.get("location")), (302, "/redirect/1/files/a.mp3?x=1&y=2"), "redirect/2")
        r = get("/redirect/0/files/a.mp3?x=1")
        t.equal((r.status, r.headers.get("location")), (302, "/files/a.mp3?x=1"), "redirect/0")
        r = get("/redirect/0/files/sub%20dir/b.FLAC")
        t.equal(r.headers.get("location"), "/files/sub%20dir/b.FLAC", "redirect keeps escapes")
        r = get("/redirect301/1/files/a.mp3")
        t.equal((r.status, r.headers.get("location")), (301, "/redirect301/0/files/a.mp3"), "redirect301/1")
        r = get("/redirect301/0/files/a.mp3")
        t.equal((r.status, r.headers.get("location")), (301, "/files/a.mp3"), "redirect301/0")
        r = get("/redirect-loop?a=b")
        t.equal((r.status, r.headers.get("location")), (302, "/redirect-loop?a=b"), "redirect-loop")
        r = get("/redirect-abs/files/a.mp3?drop=5")
        t.equal((r.status, r.headers.get("location")), (302, "http://127.0.0.1:%d/files/a.mp3?drop=5" % port),
                "redirect-abs")
        r = get("/redirect-to?url=https%3A%2F%2F127.0.0.1%3A9%2Ffiles%2Fa.mp3%3Fx%3D1")
        t.equal((r.status, r.headers.get("location")), (302, "https://127.0.0.1:9/files/a.mp3?x=1"), "redirect-to")
        t.equal(get("/redirect-to").status, 400, "redirect-to without url")
        with urllib.request.urlopen("http://127.0.0.1:%d/redirect/3/files/a.mp3?garbage=10" % port, timeout=10) as u:
            t.equal((u.status, u.geturl().endswith("/files/a.mp3?garbage=10"), u.read()),
                    (200, True, body[:10] + garbage(10, 4990)), "urllib follows four redirects with the query")
        try:
            urllib.request.urlopen("http://127.0.0.1:%d/redirect-loop" % port, timeout=10)
            t.check(False, "urllib gave up on /redirect-loop")
        except urllib.error.HTTPError as e:
            t.check(e.code == 302, "urllib gave up on /redirect-loop with 302")
        t.equal(get("/redirect/x/files/a.mp3").status, 400, "redirect with a bad count")

        # -- /status/ -----------------------------------------------------------------------------
        for code, text in ((404, "404 Not Found\n"), (500, "500 Internal Server Error\n"),
                           (503, "503 Service Unavailable\n"), (299, "299 Status 299\n")):
            r = get("/status/%d" % code)
            t.equal((r.status, r.body.decode()), (code, text), "/status/%d" % code)
        r = get("/status/204")
        t.equal((r.status, "content-length" in r.headers, r.body), (204, False, b""), "/status/204")
        t.equal(get("/status/99").status, 400, "/status/99 is refused")
        t.equal(get("/status/abc").status, 400, "/status/abc is refused")

        # -- playlists ----------------------------------------------------------------------------
        target = urllib.parse.quote("live/a.mp3?metaint=1000&titles=A|B", safe="")
        r = get("/playlist.pls?target=" + target)
        base = "http://127.0.0.1:%d/" % port
        t.equal((r.status, r.headers.get("content-type"), r.body.decode()),
                (200, "audio/x-scpls",
                 "[playlist]\nNumberOfEntries=2\nFile1=%slive/a.mp3?metaint=1000&titles=A|B\nTitle1=%s\nLength1=-1\n"
                 "File2=%sstatus/404\nTitle2=Dummy second entry\nLength2=-1\nVersion=2\n" % (base, DEFAULT_TITLE, base)),
                "PLS")
        r = get("/playlist.m3u?target=/files/a.mp3&title=Caf%C3%A9")
        t.equal((r.status, r.headers.get("content-type"), r.body.decode()),
                (200, "audio/x-mpegurl",
                 "#EXTM3U\n#EXTINF:-1,Café\n%sfiles/a.mp3\n#EXTINF:-1,Dummy second entry\n%sstatus/404\n" % (base, base)),
                "M3U with a UTF-8 title")
        r = get("/playlist.m3u8?target=files/a.mp3&type=text/plain")
        t.equal((r.headers.get("content-type"), r.body.startswith(b"#EXTM3U\n")), ("text/plain", True),
                "M3U8, type= applies to playlists")
        t.equal(get("/playlist.pls").status, 400, "playlist without target")

        # -- /live/ -------------------------------------------------------------------------------
        r = get("/live/c.bin?loops=3")
        t.equal((r.status_line, r.body, "content-length" in r.headers), ("HTTP/1.0 200 OK", body[:10] * 3, False),
                "live loops=3 without metadata")
        t.equal((r.headers.get("content-type"), r.headers.get("icy-name"), r.headers.get("icy-genre"),
                 r.headers.get("icy-br"), r.headers.get("icy-description"), r.headers.get("icy-url"),
                 "icy-metaint" in r.headers),
                (DEFAULT_MIME, ICY_DEFAULTS["name"], ICY_DEFAULTS["genre"], ICY_DEFAULTS["br"],
                 ICY_DEFAULTS["description"], ICY_DEFAULTS["url"], False), "live default headers")
        r = get("/live/a.mp3?loops=1&name=My%20Radio&genre=Jazz&br=64&description=D&url=http://x/&type=audio/aacp")
        t.equal((r.headers.get("content-type"), r.headers.get("icy-name"), r.headers.get("icy-genre"),
                 r.headers.get("icy-br"), r.headers.get("icy-description"), r.headers.get("icy-url"), r.body),
                ("audio/aacp", "My Radio", "Jazz", "64", "D", "http://x/", body), "live header overrides")
        r = get("/live/a.mp3?loops=2&metaint=1000")
        t.equal(("icy-metaint" in r.headers, r.body), (False, body * 2), "metaint without Icy-MetaData: 1")
        r = get("/live/a.mp3?loops=1&icyok=1")
        t.equal((r.status_line, r.body), ("ICY 200 OK", body), "icyok=1")
        r = get("/live/a.mp3?loops=1&icynospace=1&name=N")
        t.equal(([l for l in r.head_lines if l.startswith("icy-name")], "content-type: " in
                 [l.lower()[:14] for l in r.head_lines], r.body), (["icy-name:N"], True, body), "icynospace=1")
        r = get("/live/empty.wav?loops=5")
        t.equal((r.status, r.body), (200, b""), "live of an empty file ends")
        t.equal(get("/live/missing.mp3").status, 404, "live of a missing file")
        t.equal(get("/live/a.mp3?charset=koi8-r", [("Icy-MetaData", "1")]).status, 400, "unknown charset")

        # ICY framing, parsed back: audio exact, titles on time.
        def framed(query, titles, title_every, metaint, loops, charset="utf-8", stream_url=""):
            r = get("/live/a.mp3?loops=%d&metaint=%d&%s" % (loops, metaint, query), [("Icy-MetaData", "1")])
            t.equal(r.headers.get("icy-metaint"), str(metaint), "icy-metaint for %s" % query)
            audio, blocks = parse_icy(r.body, metaint)
            t.equal(audio, body * loops, "ICY audio for %s" % query)
            expected, last = [], None
            for k in range(1, len(body) * loops // metaint + 1):
                title = titles[(k * metaint // title_every) % len(titles)]
                expected.append(None if title == last else
                                ("StreamTitle='%s';StreamUrl='%s';" % (title, stream_url)).encode(charset))
                last = title
            t.equal([b.rstrip(b"\0") if b else None for b in blocks], expected, "ICY titles for %s" % query)
            t.check(all(b is None or len(b) - len(b.rstrip(b"\0")) < 16 for b in blocks),
                    "ICY blocks are padded with fewer than 16 zeros for %s" % query)
            return r

        framed("titles=One|Two%20%C3%A4|Three&titleevery=1500", ["One", "Two ä", "Three"], 1500, 1000, 2)
        framed("titles=A|B", ["A", "B"], 5000, 700, 3, stream_url="")  # title changes with each loop
        framed("", [DEFAULT_TITLE], 5000, 4096, 2)  # one title: only the first block has text
        framed("titles=%D0%9A%D0%B8%D0%BD%D0%BE|Ab&charset=cp1251&streamurl=http://s/&titleevery=2000", ["Кино", "Ab"], 2000, 1000, 1,
               charset="cp1251", stream_url="http://s/")
        r = framed("titles=Caf%C3%A9|B&charset=latin1&name=Caf%C3%A9&titleevery=3000", ["Café", "B"], 3000, 1000, 1, charset="latin-1")
        t.equal(r.headers.get("icy-name"), "Café", "icy-name in the charset (Latin-1 bytes)")
        r = get("/live/c.bin?loops=1&metaint=10&titles=%s" % ("x" * 5000), [("Icy-MetaData", "1")])
        t.equal((r.body[:10], r.body[10], len(r.body)), (body[:10], 255, 10 + 1 + 4080), "an over-long title is cut to 255 blocks")

        # drop, hang, rate and an endless stream on /live/.
        r = get("/live/a.mp3?metaint=1000&drop=2500", [("Icy-MetaData", "1")])
        t.equal(len(r.body), 2500, "live drop=2500 counts metadata bytes too")
        t.equal(r.body[:1000], body[:1000], "live drop: audio first")
        r = get("/live/a.mp3?drop=12000")
        t.equal(r.body, (body * 3)[:12000], "endless live with drop")
        r = get("/live/a.mp3?dropfirst=100&loops=1")
        t.equal((r.body, get("/live/a.mp3?dropfirst=100&loops=1").body), (body[:100], body), "live dropfirst")
        before = time.monotonic()
        r = get("/live/a.mp3?loops=1&rate=25000")
        t.equal(r.body, body, "live rate body")
        t.check(time.monotonic() - before >= (5000 - 1250) / 25000 * 0.95, "live rate=25000 paced")
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET /live/a.mp3?hang=1 HTTP/1.1\r\nHost: x\r\nIcy-MetaData: 1\r\n\r\n")
            data = read_head(s)
            s.settimeout(0.2)
            try:
                s.recv(4096)
                t.check(False, "live hang=1 sent a body")
            except socket.timeout:
                t.check(data.startswith(b"HTTP/1.0 200 OK") and data.endswith(b"\r\n\r\n"), "live hang=1 headers only")
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET /live/a.mp3 HTTP/1.1\r\nHost: x\r\n\r\n")
            data = b""
            while len(data) < 100000:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            t.equal(data.partition(b"\r\n\r\n")[2][:20000], (body * 4)[:20000], "endless live loops the file")

        # -- /hls/ ----------------------------------------------------------------------------------
        run_hls_self_test(t, root, get, port)

        # -- /log ---------------------------------------------------------------------------------
        get("/log?clear=1")
        get("/files/a.mp3", [("Range", "bytes=10-"), ("User-Agent", "SelfTest/1")])
        get("/live/c.bin?loops=1&metaint=5", [("Icy-MetaData", "1")])
        get("/nowhere?q=%C3%A4", method="HEAD")
        expected = [
            {"method": "GET", "path": "/files/a.mp3", "Range": "bytes=10-", "User-Agent": "SelfTest/1"},
            {"method": "GET", "path": "/live/c.bin?loops=1&metaint=5", "Icy-MetaData": "1"},
            {"method": "HEAD", "path": "/nowhere?q=%C3%A4"},
        ]
        r = get("/log")
        t.equal((r.status, r.headers.get("content-type"), json.loads(r.body)), (200, "application/json", expected), "/log")
        t.equal(json.loads(get("/log?clear=1").body), expected, "/log?clear=1 returns the log")
        t.equal(json.loads(get("/log").body), [], "/log?clear=1 empties it, /log is not logged")
        with urllib.request.urlopen("http://127.0.0.1:%d/files/c.bin" % port, timeout=10) as u:
            u.read()
        log = json.loads(get("/log?clear=1").body)
        t.check(len(log) == 1 and log[0]["User-Agent"].startswith("Python-urllib/"), "/log has urllib's User-Agent")
    finally:
        server.shutdown()
        server.server_close()
        os.unlink(os.path.join(os.path.dirname(root), outside))

    # -- the command line: exactly `PORT <n>\n` on stdout, quiet stderr, --root checked ---------
    script = os.path.abspath(__file__)
    p = subprocess.Popen([sys.executable, script, "--root", root, "--exit-on-stdin-eof"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = p.stdout.readline().decode()
        t.check(re.fullmatch(r"PORT [1-9][0-9]*\n", line) is not None, "command line prints PORT <n>: %r" % line)
        if line.startswith("PORT "):
            child = int(line.split()[1])
            t.equal(raw_request(child, "/files/c.bin").body, body[:10], "command-line server serves --root")
            t.equal(raw_request(child, "/files/missing").status, 404, "command-line server 404")
        p.stdin.close()  # --exit-on-stdin-eof: the parent's end closing stops the server
        p.wait(timeout=10)
        t.equal(p.returncode, 0, "--exit-on-stdin-eof exits cleanly")
        t.equal(p.stderr.read(), b"", "the server is quiet on stderr")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdout.close()
        p.stderr.close()
    bad = subprocess.run([sys.executable, script, "--root", os.path.join(root, "no-such-folder")],
                         stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    t.equal((bad.returncode, bad.stdout), (2, b""), "a missing --root fails without printing a port")
    t.check(b"not a directory" in bad.stderr, "a missing --root says why")
    print("self-test took %.2f s" % (time.monotonic() - started))


def hls_lines(body):
    """A served media playlist: (header tags, [(uri, discontinuity before it, key line)], ended)."""
    header, segments, discontinuity, key, ended = {}, [], False, None, False
    for line in body.decode("utf-8").splitlines():
        if line.startswith("#EXT-X-MEDIA-SEQUENCE:") or line.startswith("#EXT-X-DISCONTINUITY-SEQUENCE:") \
                or line.startswith("#EXT-X-TARGETDURATION:"):
            name, _, value = line.partition(":")
            header[name[1:]] = int(value)
        elif line == "#EXT-X-DISCONTINUITY":
            discontinuity = True
        elif line.startswith("#EXT-X-KEY:"):
            key = line
        elif line == "#EXT-X-ENDLIST":
            ended = True
        elif line and not line.startswith("#"):
            segments.append((line, discontinuity, key))
            discontinuity = False
    return header, segments, ended


def run_hls_self_test(t, root, get, port):
    # Three segments of 1, 1 and 0.5 s (MEDIA-SEQUENCE 5, one key with no IV), a second variant
    # without a key, and a master with both and a rendition.
    seg = [bytes([k]) * (600 + 100 * k) for k in range(3)]
    key = bytes(range(16))
    os.makedirs(os.path.join(root, "hls", "a"))
    os.makedirs(os.path.join(root, "hls", "b"))
    for k, data in enumerate(seg):
        for folder in ("a", "b"):
            with open(os.path.join(root, "hls", folder, "s%d.ts" % k), "wb") as f:
                f.write(data)
    with open(os.path.join(root, "hls", "a", "key.bin"), "wb") as f:
        f.write(key)
    durations = ["1.000", "1.000", "0.500"]
    body = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:1", "#EXT-X-MEDIA-SEQUENCE:5",
            "#EXT-X-PLAYLIST-TYPE:VOD", '#EXT-X-KEY:METHOD=AES-128,URI="key.bin"']
    for k in range(3):
        body += ["#EXTINF:%s," % durations[k], "s%d.ts" % k]
    with open(os.path.join(root, "hls", "a", "index.m3u8"), "w") as f:
        f.write("\n".join(body + ["#EXT-X-ENDLIST"]) + "\n")
    with open(os.path.join(root, "hls", "b", "index.m3u8"), "w") as f:
        f.write("\n".join([l for l in body if "KEY" not in l and "MEDIA-SEQ" not in l] + ["#EXT-X-ENDLIST"]) + "\n")
    with open(os.path.join(root, "hls", "master.m3u8"), "w") as f:
        f.write('#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="g",NAME="x",URI="b/index.m3u8"\n'
                '#EXT-X-STREAM-INF:BANDWIDTH=2000,CODECS="mp4a.40.2",AUDIO="g"\na/index.m3u8\n'
                '#EXT-X-STREAM-INF:BANDWIDTH=1000\nb/index.m3u8\n')

    # VOD pass-through: segments and the key through /files/, everything else as written.
    r = get("/hls/hls/a/index.m3u8")
    header, segments, ended = hls_lines(r.body)
    t.equal((r.status, r.headers.get("content-type"), header, ended),
            (200, "application/vnd.apple.mpegurl", {"EXT-X-TARGETDURATION": 1, "EXT-X-MEDIA-SEQUENCE": 5}, True),
            "/hls/ VOD playlist")
    token = hashlib.sha256(b"/hls/hls/a/index.m3u8").hexdigest()[:8]
    t.equal([u for u, _, _ in segments], ["/files/hls/a/s%d.ts?seg=%d&pl=%s" % (k, k, token) for k in range(3)],
            "/hls/ VOD segment URIs")
    t.equal({k for _, _, k in segments}, {'#EXT-X-KEY:METHOD=AES-128,URI="/files/hls/a/key.bin"'}, "/hls/ key URI")
    t.equal([get(u).body for u, _, _ in segments], seg, "/hls/ VOD segments serve the files")
    t.equal(get("/files/hls/a/key.bin").body, key, "the key")

    # missing, fail, slow, slowfrom, badkey.
    _, segments, _ = hls_lines(get("/hls/hls/a/index.m3u8?missing=0,2&fail=1:2&badkey=1").body)
    t.equal([get(u).status for u, _, _ in segments], [404, 500, 404], "missing=0,2 and the first fail=1:2")
    t.equal([get(segments[1][0]).status, get(segments[1][0]).status], [500, 200], "fail=1:2: the third GET works")
    key_uri = re.search(r'URI="([^"]*)"', segments[0][2]).group(1)
    t.equal((key_uri, get(key_uri).body), ("/files/hls/a/key.bin?badkey=1", bytes(b ^ 0xFF for b in key)), "badkey=1")
    _, segments, _ = hls_lines(get("/hls/hls/a/index.m3u8?slow=1:4000").body)
    t.equal(["trickle=4000" in u for u, _, _ in segments], [False, True, False], "slow=1:4000")
    before = time.monotonic()
    t.equal(get(segments[1][0]).body, seg[1], "slow segment body")
    t.check(time.monotonic() - before >= (700 - 200) / 4000 * 0.95, "slow=1:4000 is paced")
    _, segments, _ = hls_lines(get("/hls/hls/a/index.m3u8?slowfrom=1:9000").body)
    t.equal(["trickle=9000" in u for u, _, _ in segments], [False, True, True], "slowfrom=1:9000")
    for query in ("fail=x", "missing=1;2", "slow=1", "live=1&window=0", "live=1&endafter=0", "slowfrom=1:2,3:4"):
        t.equal(get("/hls/hls/a/index.m3u8?" + query).status, 400, "/hls/ refuses %s" % query)
    t.equal(get("/hls/hls/a/s0.ts").status, 400, "/hls/ of a file that is no playlist")
    t.equal(get("/hls/hls/nothing.m3u8").status, 404, "/hls/ of a missing playlist")

    # A master passes its query on, with master= for the shared live clock.
    r = get("/hls/hls/master.m3u8?live=1&slowvariant=a/&slow=0:5000")
    lines = r.body.decode().splitlines()
    q = "live=1&slowvariant=a%2F&slow=0%3A5000&master=hls%2Fmaster.m3u8"
    t.equal((lines[1], lines[3], lines[5]),
            ('#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="g",NAME="x",URI="/hls/hls/b/index.m3u8?%s"' % q,
             "/hls/hls/a/index.m3u8?" + q, "/hls/hls/b/index.m3u8?" + q), "master rewritten")
    _, a, _ = hls_lines(get(lines[3]).body)
    _, b, _ = hls_lines(get(lines[5]).body)
    t.equal((["trickle" in u for u, _, _ in a], ["trickle" in u for u, _, _ in b]),
            ([True, False, False], [False, False, False]), "slowvariant=a/ slows only a's playlist")

    # The live window, computed: 1, 1, 0.5 s segments looped; window 2 from sequence 0.
    playlist = HLSMediaPlaylist(open(os.path.join(root, "hls", "a", "index.m3u8")).read())
    for elapsed, end_after, expected in ((0, None, ([0, 1], False)), (0.49, None, ([0, 1], False)),
                                         (0.5, None, ([1, 2], False)), (1.5, None, ([2, 3], False)),
                                         (2.5, None, ([3, 4], False)), (3.0, None, ([4, 5], False)),
                                         (2.5 * 100 + 0.5, None, ([301, 302], False)),
                                         (0, 1, ([0], True)), (0.5, 4, ([1, 2], False)), (1.5, 4, ([2, 3], True)),
                                         (99, 4, ([2, 3], True))):
        t.equal(Handler.hls_live_window(playlist, 2, 0, end_after, elapsed), expected,
                "live window after %s s, endafter=%s" % (elapsed, end_after))

    # The live playlist itself, at 50 times real time: a 1-s segment every 20 ms.
    def poll(query, until, seconds=5.0):
        deadline, seen = time.monotonic() + seconds, []
        while True:
            seen.append(hls_lines(get("/hls/hls/a/index.m3u8?" + query).body))
            if until(seen[-1]) or time.monotonic() > deadline:
                return seen
            time.sleep(0.01)

    seen = poll("live=1&window=2&speed=50&x=1", lambda s: s[0]["EXT-X-MEDIA-SEQUENCE"] >= 5)
    header, segments, ended = seen[0]
    t.equal((header, ended), ({"EXT-X-TARGETDURATION": 1, "EXT-X-MEDIA-SEQUENCE": 0, "EXT-X-DISCONTINUITY-SEQUENCE": 0},
                              False), "live: the first window")
    t.equal([re.search(r"IV=0x([0-9a-f]+)", k).group(1)[-2:] for _, _, k in segments], ["05", "06"],
            "live: implicit IVs made explicit with the VOD sequence numbers")
    starts = [h["EXT-X-MEDIA-SEQUENCE"] for h, _, _ in seen]
    t.check(starts == sorted(starts) and starts[-1] >= 5, "live: the window advances (%s)" % starts[-8:])
    t.check(not any(e for _, _, e in seen), "live: no ENDLIST")
    for header, segments, _ in seen:
        first = header["EXT-X-MEDIA-SEQUENCE"]
        numbers = [int(re.search(r"seg=(\d+)", u).group(1)) for u, _, _ in segments]
        files = [re.search(r"/s(\d)\.ts", u).group(1) for u, _, _ in segments]
        t.equal((numbers, files, [d for _, d, _ in segments]),
                ([first, first + 1], [str(first % 3), str((first + 1) % 3)], [n % 3 == 0 and n > 0 for n in numbers]),
                "live window at %d: numbers, files, a discontinuity at each wrap" % first)
        t.equal(header["EXT-X-DISCONTINUITY-SEQUENCE"], len([m for m in range(1, first) if m % 3 == 0]),
                "live window at %d: the discontinuity sequence" % first)
    seen = poll("live=1&window=2&speed=50&endafter=4", lambda s: s[2])
    t.equal(([u.split("?")[0][-6:] for u, _, _ in seen[-1][1]], seen[-1][2]), (["/s2.ts", "/s0.ts"], True),
            "endafter=4: ENDLIST after the fourth segment")
    time.sleep(0.1)
    t.equal(hls_lines(get("/hls/hls/a/index.m3u8?live=1&window=2&speed=50&endafter=4").body), seen[-1],
            "endafter=4: the window stops")
    seen = poll("live=1&window=2&speed=50&stall=1", lambda s: False, seconds=0.3)
    t.equal(({h["EXT-X-MEDIA-SEQUENCE"] for h, _, _ in seen[-5:]}, any(e for _, _, e in seen)), ({1}, False),
            "stall=1: the window stops after 1 s of media, without ENDLIST")
    header, segments, _ = hls_lines(get("/hls/hls/a/index.m3u8?live=1&window=3&seq=7").body)
    t.equal((header["EXT-X-MEDIA-SEQUENCE"], [re.search(r"/s(\d)\.ts", u).group(1) for u, _, _ in segments],
             [d for _, d, _ in segments]), (7, ["1", "2", "0"], [False, False, True]),
            "seq=7: live segment n is VOD segment n mod 3")
    # The variants of one live master share its clock: b's first window is as far on as a's.
    lines = get("/hls/hls/master.m3u8?live=1&window=2&speed=10").body.decode().splitlines()
    hls_lines(get(lines[3]).body)
    time.sleep(0.5)
    t.check(hls_lines(get(lines[5]).body)[0]["EXT-X-MEDIA-SEQUENCE"] >= 3,
            "a live master's variants share one clock")


def main():
    default_root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures"))
    parser = argparse.ArgumentParser(description="Local HTTP test server for Tonearm's streaming tests.")
    parser.add_argument("--root", default=default_root, help="folder served under /files/ and /live/ (default: Tests/Fixtures)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default 0: a free one)")
    parser.add_argument("--verbose", action="store_true", help="log every request on stderr")
    parser.add_argument("--exit-on-stdin-eof", action="store_true", help="exit when stdin reaches end of file")
    parser.add_argument("--self-test", action="store_true", help="check every behaviour and exit")
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), help="serve HTTPS with this certificate and key (PEM)")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    return serve(args)


if __name__ == "__main__":
    sys.exit(main())
