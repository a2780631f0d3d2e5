#!/usr/bin/env python3
"""A misbehaving registry for tests/cli/suites/registry_faults_test.sh: an HTTP proxy on 127.0.0.1 in front of a plain
docker-registry that breaks blob and manifest answers on purpose. Standard library only.

  fault_proxy.py PORTFILE UPSTREAM-PORT LOG [FAULT ...]

Faults (blob offsets are absolute offsets in the blob, whatever range an answer covers):
  --fail-first N:STATUS     the first N requests are answered STATUS with an empty body
  --cut-at OFFSET           the first blob answer that reaches OFFSET closes the connection there (once)
  --truncate-at OFFSET      every blob answer closes the connection at OFFSET (its Content-Length promised more)
  --stall-at OFFSET:SECONDS the first blob answer that reaches OFFSET sends nothing for SECONDS
  --stall-always            ... every blob answer that reaches it
  --corrupt-at OFFSET       the byte at OFFSET is flipped in every blob answer
  --redirect-loop           blob GETs are answered 307 to themselves
  --inflate-length BYTES    blob answers announce BYTES more (Content-Length, Content-Range) than they send
  --huge-manifests          manifest GETs are answered with 5 MiB of JSON
  --ignore-range            Range is not passed on: every blob answer is a 200 from byte 0
An answer "reaches" an offset only when the client asked for it: a 200 sent past the end of the asked Range (the
client stops reading there, but the socket takes some more) is not cut or stalled, so a cut lands in the transfer
that wanted the bytes, not in a header fetch the registry answered whole.
The log has one line per request: "METHOD PATH STATUS BODY-BYTES RANGE [what was done]". The port is written to
PORTFILE once the proxy listens; it runs until killed.
"""
import http.client
import http.server
import os
import re
import socket
import sys
import threading
import time

LOCK = threading.Lock()


def log_line(path, line):
    with LOCK, open(path, "a") as f:
        f.write(line + "\n")


def parse(args):
    f = {"fail": [0, 0], "cut": None, "truncate": None, "stall": None, "stall_always": False, "corrupt": None,
         "loop": False, "inflate": 0, "huge": False, "ignore_range": False}
    while args:
        flag = args.pop(0)
        if flag == "--fail-first":
            f["fail"] = [int(x) for x in args.pop(0).split(":")]
        elif flag == "--cut-at":
            f["cut"] = int(args.pop(0))
        elif flag == "--truncate-at":
            f["truncate"] = int(args.pop(0))
        elif flag == "--stall-at":
            off, secs = args.pop(0).split(":")
            f["stall"] = [int(off), float(secs)]
        elif flag == "--stall-always":
            f["stall_always"] = True
        elif flag == "--corrupt-at":
            f["corrupt"] = int(args.pop(0))
        elif flag == "--redirect-loop":
            f["loop"] = True
        elif flag == "--inflate-length":
            f["inflate"] = int(args.pop(0))
        elif flag == "--huge-manifests":
            f["huge"] = True
        elif flag == "--ignore-range":
            f["ignore_range"] = True
        else:
            sys.exit("unknown fault " + flag)
    return f


def main():
    portfile, upstream, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    faults = parse(sys.argv[4:])

    class Proxy(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def note(self, status, sent, what=""):
            log_line(log, "%s %s %d %d %s%s" % (self.command, self.path, status, sent, self.headers.get("Range", "-"),
                                                 " " + what if what else ""))

        def empty(self, status, headers=()):
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", "0")
            self.end_headers()
            self.note(status, 0)

        def handle_any(self):
            blob = "/blobs/sha256:" in self.path and self.command == "GET"
            with LOCK:
                failing = faults["fail"][0] > 0
                faults["fail"][0] -= 1 if failing else 0
            if failing:
                return self.empty(faults["fail"][1])
            if blob and faults["loop"]:
                return self.empty(307, [("Location", self.path)])
            if faults["huge"] and self.command == "GET" and "/manifests/" in self.path:
                body = b'{"schemaVersion":2,"pad":"' + b"x" * (5 << 20) + b'"}'
                self.send_response(200)
                self.send_header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass
                return self.note(200, len(body), "HUGE")
            self.forward(blob)

        def forward(self, blob):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            conn = http.client.HTTPConnection("127.0.0.1", upstream, timeout=30)
            conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", "127.0.0.1:%d" % self.server.server_address[1])
            for k, v in self.headers.items():
                if k.lower() in ("host", "connection", "content-length") or (k.lower() == "range" and faults["ignore_range"]):
                    continue
                conn.putheader(k, v)
            if body is not None or self.command in ("PUT", "POST", "PATCH"):
                conn.putheader("Content-Length", str(len(body or b"")))
            conn.endheaders(body)
            resp = conn.getresponse()
            start = 0
            self.send_response_only(resp.status)
            for k, v in resp.getheaders():
                if k.lower() in ("connection", "transfer-encoding"):
                    continue
                if k.lower() == "location":
                    v = v.replace("127.0.0.1:%d" % upstream, "127.0.0.1:%d" % self.server.server_address[1])
                if blob and k.lower() == "content-range":
                    m = re.match(r"bytes (\d+)-(\d+)/(\d+)", v)
                    start = int(m.group(1))
                    if faults["inflate"]:
                        v = "bytes %s-%d/%d" % (m.group(1), int(m.group(2)) + faults["inflate"], int(m.group(3)) + faults["inflate"])
                if blob and k.lower() == "content-length" and faults["inflate"]:
                    v = str(int(v) + faults["inflate"])
                self.send_header(k, v)
            self.end_headers()
            if self.command == "HEAD":
                return self.note(resp.status, 0)
            self.stream(resp, start if blob and resp.status == 206 else 0, blob and resp.status in (200, 206))

        def asked(self, offset):
            """Whether the client asked for the byte at OFFSET (past its Range's end it is not reading)."""
            m = re.match(r"bytes=\d+-(\d+)$", self.headers.get("Range", ""))
            return m is None or offset <= int(m.group(1))

        def stream(self, resp, start, blob):
            pos, sent, what = start, 0, ""
            try:
                while True:
                    chunk = resp.read(65536)
                    if not chunk:
                        break
                    end = pos + len(chunk)
                    if blob and faults["corrupt"] is not None and pos <= faults["corrupt"] < end:
                        i = faults["corrupt"] - pos
                        chunk = chunk[:i] + bytes([chunk[i] ^ 0x55]) + chunk[i + 1:]
                        what = "CORRUPT"
                    stop = None
                    with LOCK:
                        if blob and faults["truncate"] is not None and pos <= faults["truncate"] < end:
                            stop = faults["truncate"]
                        if blob and faults["cut"] is not None and pos <= faults["cut"] < end and self.asked(faults["cut"]):
                            stop = faults["cut"]
                        stall = faults["stall"]
                    if blob and stall and pos <= stall[0] < end and self.asked(stall[0]):
                        with LOCK:
                            if not faults["stall_always"]:
                                faults["stall"] = None  # before the pause: the retry comes during it
                        i = stall[0] - pos
                        self.wfile.write(chunk[:i])
                        self.wfile.flush()
                        sent += i
                        time.sleep(stall[1])
                        chunk, pos, what = chunk[i:], stall[0], "STALL"
                    if stop is not None:
                        self.wfile.write(chunk[:stop - pos])
                        self.wfile.flush()
                        sent += stop - pos
                        with LOCK:
                            if faults["cut"] == stop:
                                faults["cut"] = None  # once, and only once it was really done
                        self.connection.shutdown(socket.SHUT_RDWR)
                        self.close_connection = True
                        return self.note(resp.status, sent, "CUT")
                    self.wfile.write(chunk)
                    sent += len(chunk)
                    pos = end
            except OSError:
                self.close_connection = True
                return self.note(resp.status, sent, (what + " " if what else "") + "CLIENT-GONE")
            if blob and faults["inflate"]:
                self.close_connection = True  # the body is shorter than announced
            self.note(resp.status, sent, what)

        do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = handle_any

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    srv.daemon_threads = True
    with open(portfile + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(portfile + ".tmp", portfile)
    srv.serve_forever()


if __name__ == "__main__":
    main()
