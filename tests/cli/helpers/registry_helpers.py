#!/usr/bin/env python3
"""Loopback helpers for tests/cli/suites/registry_test.sh (standard library, plus PyJWT for the token server).

  set-fingerprint IN OUT FP.json    rewrite an archive's manifest "fingerprint" (header recomputed), to fake
                                    archives built on other machines
  free-port                         print a free 127.0.0.1 port
  proxy PORTFILE UPSTREAM LOG [--cut-after N] [--basic USER:PASS] [--redirect-blobs BACKEND_PORT]
        [--fail-first N:STATUS] [--huge-manifests 1]
                                    HTTP proxy in front of a plain registry on 127.0.0.1:UPSTREAM; logs one line per
                                    request "METHOD PATH STATUS BODY-BYTES RANGE"; --cut-after closes the first blob
                                    response longer than N after N body bytes; --basic demands Basic auth itself;
                                    --redirect-blobs answers blob GETs with a 307 to the backend on another port;
                                    --fail-first answers the first N requests with STATUS (429: Retry-After: 1);
                                    --huge-manifests answers manifest GETs with 5 MiB of JSON
  backend PORTFILE UPSTREAM LOG     logs every request's headers (to prove no Authorization arrives) and serves
                                    the blob from the registry
  hang PORTFILE LOG                 accepts connections and never answers (a hung mirror); logs one line per
                                    connection
  token-server PORTFILE KEY CERT USER:PASS LOG
                                    issues JWTs (RS256, x5c) that docker-registry's token auth accepts
Every server writes its port to PORTFILE once it listens and runs until killed.
"""
import base64
import http.client
import http.server
import json
import os
import socket
import struct
import sys
import threading
import time
import hashlib

LOCK = threading.Lock()


def log_line(path, line):
    with LOCK, open(path, "a") as f:
        f.write(line + "\n")


def set_fingerprint(src, dst, fp_path):
    data = open(src, "rb").read()
    fp = json.load(open(fp_path))
    frame = struct.unpack_from("<I", data, 4)[0]
    payload = struct.unpack_from("<Q", data, 24)[0]
    msize = struct.unpack_from("<I", data, 64)[0]
    manifest = json.loads(data[68:68 + msize], object_pairs_hook=dict)
    ssize = struct.unpack_from("<I", data, 68 + msize)[0]
    sigs = data[72 + msize:72 + msize + ssize]
    body = data[8 + frame:]
    assert len(body) == payload
    manifest["fingerprint"] = fp
    m = json.dumps(manifest, separators=(",", ":"), ensure_ascii=False).encode()
    hdr = b"\x89CCPACK\n" + struct.pack("<IIQ", 1, 0, payload) + hashlib.sha256(m).digest()
    hdr += struct.pack("<I", len(m)) + m + struct.pack("<I", len(sigs)) + sigs
    out = struct.pack("<II", 0x184D2A5E, len(hdr)) + hdr + body
    open(dst, "wb").write(out)


def serve(handler, portfile):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    with open(portfile + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(portfile + ".tmp", portfile)
    srv.serve_forever()


class Forwarding(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    upstream = 0
    log = ""

    def log_message(self, *args):
        pass

    def forward(self, extra_log=""):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        conn = http.client.HTTPConnection("127.0.0.1", self.upstream, timeout=30)
        # Header by header: clients send several Accept lines, which a dict would fold into the last one.
        conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", "127.0.0.1:%d" % self.server.server_address[1])
        for k, v in self.headers.items():
            if k.lower() not in ("host", "authorization", "connection", "content-length"):
                conn.putheader(k, v)
        if body is not None or self.command in ("PUT", "POST", "PATCH"):
            conn.putheader("Content-Length", str(len(body or b"")))
        conn.endheaders(body)
        resp = conn.getresponse()
        self.send_response_only(resp.status)
        for k, v in resp.getheaders():
            if k.lower() in ("connection", "transfer-encoding"):
                continue
            if k.lower() == "location":
                v = v.replace("127.0.0.1:%d" % self.upstream, "127.0.0.1:%d" % self.server.server_address[1])
            self.send_header(k, v)
        total = int(resp.getheader("Content-Length") or 0)
        cut = self.cut_here(total)
        self.end_headers()
        sent = 0
        while self.command != "HEAD":
            chunk = resp.read(65536)
            if not chunk:
                break
            if cut is not None and sent + len(chunk) > cut:
                self.wfile.write(chunk[:cut - sent])
                self.wfile.flush()
                sent = cut
                log_line(self.log, "%s %s %d %d %s CUT" % (self.command, self.path, resp.status, sent, self.headers.get("Range", "-")))
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            self.wfile.write(chunk)
            sent += len(chunk)
        log_line(self.log, "%s %s %d %d %s%s" % (self.command, self.path, resp.status, sent, self.headers.get("Range", "-"), extra_log))

    def cut_here(self, total):
        return None

    do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = lambda self: self.forward()


def proxy(portfile, upstream, log, args):
    cut_after = None
    basic = None
    redirect = None
    fail_first = [0, 0]
    huge = False
    while args:
        flag, value = args[0], args[1]
        args = args[2:]
        if flag == "--cut-after":
            cut_after = int(value)
        elif flag == "--basic":
            basic = "Basic " + base64.b64encode(value.encode()).decode()
        elif flag == "--redirect-blobs":
            redirect = int(value)
        elif flag == "--huge-manifests":
            huge = value == "1"
        elif flag == "--fail-first":
            fail_first = [int(x) for x in value.split(":")]
    state = {"cut": cut_after}

    class Proxy(Forwarding):
        def cut_here(self, total):
            with LOCK:
                if state["cut"] is not None and "/blobs/sha256:" in self.path and total > state["cut"]:
                    n, state["cut"] = state["cut"], None
                    return n
            return None

        def handle_any(self):
            with LOCK:
                failing = fail_first[0] > 0
                fail_first[0] -= 1 if failing else 0
            if failing:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                self.send_response(fail_first[1])
                if fail_first[1] == 429:
                    self.send_header("Retry-After", "1")
                self.send_header("Content-Length", "0")
                self.end_headers()
                log_line(log, "%s %s %d 0 -" % (self.command, self.path, fail_first[1]))
                return
            if huge and self.command == "GET" and "/manifests/" in self.path:
                body = b'{"schemaVersion":2,"pad":"' + b"x" * (5 << 20) + b'"}'
                self.send_response(200)
                self.send_header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass
                log_line(log, "%s %s 200 huge -" % (self.command, self.path))
                return
            if basic and self.headers.get("Authorization") != basic:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="ccpack-test"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                log_line(log, "%s %s 401 0 -" % (self.command, self.path))
                return
            if redirect and self.command == "GET" and "/blobs/sha256:" in self.path:
                self.send_response(307)
                self.send_header("Location", "http://127.0.0.1:%d%s?X-Amz-Signature=s3cr3t" % (redirect, self.path))
                self.send_header("Content-Length", "0")
                self.end_headers()
                log_line(log, "%s %s 307 0 -" % (self.command, self.path))
                return
            self.forward()

        do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = handle_any

    Proxy.upstream = upstream
    Proxy.log = log
    serve(Proxy, portfile)


def backend(portfile, upstream, log):
    class Backend(Forwarding):
        def handle_any(self):
            log_line(log, "HEADERS %s %s %s" % (self.command, self.path, json.dumps(dict(self.headers.items()))))
            self.path = self.path.split("?")[0]
            self.forward()

        do_GET = do_HEAD = handle_any

    Backend.upstream = upstream
    Backend.log = log
    serve(Backend, portfile)


def token_server(portfile, key_path, cert_path, userpass, log):
    import jwt  # PyJWT (Debian python3-jwt)
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    key = open(key_path, "rb").read()
    cert = x509.load_pem_x509_certificate(open(cert_path, "rb").read())
    x5c = [base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()]
    expected = "Basic " + base64.b64encode(userpass.encode()).decode()

    class Token(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            from urllib.parse import urlparse, parse_qs
            q = parse_qs(urlparse(self.path).query)
            ok = self.headers.get("Authorization") == expected
            log_line(log, "TOKEN auth=%s scope=%s" % ("ok" if ok else "none", q.get("scope", [""])[0]))
            if not ok:
                self.send_response(401)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            access = []
            for scope in q.get("scope", []):
                kind, name, actions = scope.split(":")
                access.append({"type": kind, "name": name, "actions": actions.split(",")})
            now = int(time.time())
            claims = {"iss": "ccpack-test-issuer", "sub": userpass.split(":")[0], "aud": q.get("service", [""])[0],
                      "exp": now + 300, "nbf": now - 10, "iat": now, "jti": os.urandom(8).hex(), "access": access}
            token = jwt.encode(claims, key, algorithm="RS256", headers={"x5c": x5c})
            body = json.dumps({"token": token, "access_token": token, "expires_in": 300}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    serve(Token, portfile)


def hang(portfile, log):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(srv.getsockname()[1]))
    os.rename(portfile + ".tmp", portfile)
    held = []  # kept open, never read from nor written to
    while True:
        conn, _ = srv.accept()
        held.append(conn)
        log_line(log, "ACCEPTED")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "set-fingerprint":
        set_fingerprint(*args)
    elif cmd == "free-port":
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        print(s.getsockname()[1])
        s.close()
    elif cmd == "proxy":
        proxy(args[0], int(args[1]), args[2], args[3:])
    elif cmd == "backend":
        backend(args[0], int(args[1]), args[2])
    elif cmd == "hang":
        hang(args[0], args[1])
    elif cmd == "token-server":
        token_server(*args)
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
