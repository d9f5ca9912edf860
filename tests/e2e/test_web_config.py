# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""`scprof daemon --web-config FILE`: HTTPS and basic auth from a Prometheus
web configuration file (exporter-toolkit format).

The certificate is a real self-signed one made by openssl, verified by the
client (Python's ssl with it as the only CA); the bcrypt hashes come from
libcrypt itself (crypt_gensalt/crypt through ctypes), the same library
htpasswd -B and Prometheus' users rely on, so the daemon is checked against
hashes it did not make."""
import ctypes
import http.client
import os
import re
import select
import socket
import ssl
import subprocess

import pytest

from conftest import SCPROF, TIMEOUT, run

PASSWORD = "s3cret pass:word"


def bcrypt(password, cost=5):
    lib = ctypes.CDLL("libcrypt.so.1")
    lib.crypt_gensalt.restype = ctypes.c_char_p
    lib.crypt.restype = ctypes.c_char_p
    salt = lib.crypt_gensalt(b"$2b$", cost, None, 0)
    h = lib.crypt(password.encode(), salt)
    assert h and h.startswith(b"$2b$") and len(h) == 60, h
    return h.decode()


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("certs")
    for name in ("server", "other"):
        p = run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                 "-keyout", str(d / f"{name}.key"), "-out",
                 str(d / f"{name}.crt"), "-days", "2", "-subj",
                 "/CN=localhost", "-addext",
                 "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        assert p.returncode == 0, p.stderr.decode()
    return d


@pytest.fixture(scope="module")
def hashed():
    return bcrypt(PASSWORD)


class WebDaemon:
    def __init__(self, config):
        self.proc = subprocess.Popen(
            [SCPROF, "daemon", "--listen", "127.0.0.1:0", "--comm-series",
             "0", "-p", str(os.getpid()), "--web-config", str(config)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL)
        r, _, _ = select.select([self.proc.stderr], [], [], TIMEOUT)
        assert r, "no log line from the daemon"
        line = self.proc.stderr.readline()
        m = re.search(rb"serving metrics at (https?)://127\.0\.0\.1:(\d+)/",
                      line)
        assert m, line + self.stop()[1]
        self.scheme, self.port = m.group(1).decode(), int(m.group(2))

    def get(self, path="/metrics", auth=None, ca=None):
        if ca:
            ctx = ssl.create_default_context(cafile=str(ca))
            c = http.client.HTTPSConnection("localhost", self.port,
                                            timeout=TIMEOUT, context=ctx)
        else:
            c = http.client.HTTPConnection("127.0.0.1", self.port,
                                           timeout=TIMEOUT)
        headers = {}
        if auth is not None:
            import base64
            headers["Authorization"] = "Basic " + base64.b64encode(
                auth.encode()).decode()
        c.request("GET", path, headers=headers)
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, dict(r.getheaders()), body

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        _, err = self.proc.communicate(timeout=TIMEOUT)
        return self.proc.returncode, err


@pytest.fixture
def daemon():
    made = []

    def make(config):
        d = WebDaemon(config)
        made.append(d)
        return d
    yield make
    for d in made:
        if d.proc.poll() is None:
            d.proc.kill()
            d.proc.communicate(timeout=TIMEOUT)


def write(tmp_path, text, name="web.yml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def tls_config(certs, users):
    return (f"tls_server_config:\n  cert_file: {certs}/server.crt\n"
            f"  key_file: {certs}/server.key\n"
            "basic_auth_users:\n" +
            "".join(f"  {u}: {h}\n" for u, h in users.items()))


def test_https_and_basic_auth(daemon, certs, hashed, tmp_path):
    d = daemon(write(tmp_path, tls_config(
        certs, {"prom": hashed, "other": bcrypt("another")})))
    assert d.scheme == "https"
    ca = certs / "server.crt"
    # the right password, over TLS verified against the served certificate
    status, headers, body = d.get(auth=f"prom:{PASSWORD}", ca=ca)
    assert status == 200, body
    assert b"\nscprof_build_info{" in body
    assert d.get(auth="other:another", ca=ca)[0] == 200
    # wrong password, unknown user, another user's password, none at all
    for auth in (f"prom:{PASSWORD}x", "prom:", f"nobody:{PASSWORD}",
                 "other:" + PASSWORD, None):
        status, headers, body = d.get(auth=auth, ca=ca)
        assert status == 401, (auth, status)
        assert headers.get("WWW-Authenticate", "").startswith("Basic "), \
            headers
        assert b"scprof_" not in body
    # every path needs the password, not only /metrics
    assert d.get("/", ca=ca)[0] == 401
    assert d.get("/nope", auth=f"prom:{PASSWORD}", ca=ca)[0] == 404
    # a client that trusts another certificate refuses this one
    with pytest.raises(ssl.SSLCertVerificationError):
        d.get(auth=f"prom:{PASSWORD}", ca=certs / "other.crt")
    rc, err = d.stop()
    assert rc == 0, err


def test_plain_http_on_the_tls_port_gets_no_metrics(daemon, certs, hashed,
                                                    tmp_path):
    d = daemon(write(tmp_path, tls_config(certs, {"prom": hashed})))
    with socket.create_connection(("127.0.0.1", d.port),
                                  timeout=TIMEOUT) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: "
                  b"Basic " + __import__("base64").b64encode(
                      f"prom:{PASSWORD}".encode()) + b"\r\n\r\n")
        got = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        except (ConnectionResetError, socket.timeout):
            pass
    assert b"scprof_" not in got and b"HTTP/1.1 200" not in got, got[:200]
    # and the daemon still serves TLS clients afterwards
    assert d.get(auth=f"prom:{PASSWORD}", ca=certs / "server.crt")[0] == 200


def test_basic_auth_without_tls_and_an_empty_file(daemon, hashed, tmp_path):
    d = daemon(write(tmp_path, f"basic_auth_users:\n  prom: {hashed}\n"))
    assert d.scheme == "http"
    assert d.get()[0] == 401
    assert d.get(auth=f"prom:{PASSWORD}")[0] == 200
    # an empty configuration is plain HTTP without auth, as exporter-toolkit
    e = daemon(write(tmp_path, "", name="empty.yml"))
    assert e.scheme == "http"
    assert e.get()[0] == 200


HASH = "$2b$05$NnXUOKxVPQVB8D9zjBDvsepEB2XhfNsZ3Td9naFQbqgCnHYOo17wu"


@pytest.mark.parametrize("text,line,msg", [
    ("basic_auth_users:\n  a: " + HASH + "\nbasic_auth_user:\n  b: x\n", 3,
     "unknown key 'basic_auth_user'"),
    ("tls_server_config:\n  cert_file: {c}/server.crt\n  key_file: "
     "{c}/server.key\n  keyfile: x\n", 4,
     "unknown key 'keyfile' in tls_server_config"),
    ("basic_auth_users:\n  a: [1\n", 3, "invalid YAML"),
    ("tls_server_config:\n\tcert_file: x\n", 2, "invalid YAML"),
    ("tls_server_config:\n  cert_file: {c}/missing.crt\n  key_file: "
     "{c}/server.key\n", 2, "missing.crt: No such file or directory"),
    ("tls_server_config:\n  cert_file: {c}/server.crt\n  key_file: "
     "{c}/other.key\n", 2, "not a matching PEM certificate and private key"),
    ("tls_server_config:\n  cert_file: {c}/server.crt\n", 2,
     "cert_file without key_file"),
    ("basic_auth_users:\n  a: plaintext\n", 2, "not a bcrypt hash"),
    # a SHA-512 crypt(3) hash ($6$): not bcrypt
    ("basic_auth_users:\n  a: $6$saltsalt$qFmFH.bQmmtXzyBY0s9v7Oicd2z4Xu"
     "IecDzKHJuLfOy.u5iNhcjPnU2VBLQDeHcjHwwX9bzWgVI6LUBlSNaPs/\n", 2,
     "not a bcrypt hash"),
    ("basic_auth_users:\n  a: " + HASH[:-1] + "!\n", 2, "not a bcrypt hash"),
    ("basic_auth_users:\n  a: " + HASH + "\n  a: " + HASH + "\n", 3,
     "'a' appears twice in basic_auth_users (first on line 2)"),
    ("tls_server_config:\n  client_auth_type: RequireAndVerifyClientCert\n",
     2, "client_auth_type 'RequireAndVerifyClientCert' is not supported"),
    ("basic_auth_users:\n  \"evil\\e[2J\\n\": x\n", 2,
     "password of 'evil\\x1b[2J\\x0a' is not a bcrypt hash"),
    ("- a\n- b\n", 1, "the web configuration must be a mapping"),
])
def test_file_errors_name_the_line_and_nothing_is_served(certs, tmp_path,
                                                         text, line, msg):
    cfg = write(tmp_path, text.replace("{c}", str(certs)))
    p = run([SCPROF, "daemon", "--listen", "127.0.0.1:0", "--web-config",
             str(cfg)])
    err = p.stderr.decode()
    assert p.returncode == 2, err
    assert err.count("\n") == 1, err
    assert err.startswith(f"scprof daemon: --web-config {cfg}:{line}: "), err
    assert msg in err, err
    assert "serving" not in err


def test_missing_file_is_a_usage_error(tmp_path):
    p = run([SCPROF, "daemon", "--web-config", str(tmp_path / "nope.yml")])
    assert p.returncode == 2
    assert p.stderr.decode() == (f"scprof daemon: --web-config cannot read "
                                 f"{tmp_path}/nope.yml: No such file or "
                                 "directory\n")
