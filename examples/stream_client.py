"""Streams a text to `tribunal serve`'s stream endpoint as a model would write it,
and prints each event as it arrives, after the chunk that caused it.

    python3 examples/stream_client.py URL [CHUNK_BYTES] [--token-file FILE] < output.txt

URL is the stream route with its query, for example
http://127.0.0.1:8080/v1/packs/structured-output/stream?release=true.
A server started with `--token-file` wants the same token: pass that file
with --token-file, or the token itself in the environment as TRIBUNAL_TOKEN.
Standard library only: a gateway's own client does the same over its HTTP
stack (send the body chunked; read the answer's lines while sending).
"""

import argparse
import json
import os
import select
import socket
import sys
import time
import urllib.parse


def main() -> None:
    parser = argparse.ArgumentParser(description="Stream a text to tribunal serve.")
    parser.add_argument("url")
    parser.add_argument("chunk_bytes", nargs="?", type=int, default=8)
    parser.add_argument("--token-file", help="the server's --token-file (else $TRIBUNAL_TOKEN)")
    args = parser.parse_args()
    url = urllib.parse.urlsplit(args.url)
    size = args.chunk_bytes
    token = os.environ.get("TRIBUNAL_TOKEN")
    if args.token_file:
        with open(args.token_file, encoding="utf-8") as f:
            token = f.read().strip()
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    text = sys.stdin.buffer.read()
    conn = socket.create_connection((url.hostname, url.port or 80))
    target = url.path + ("?" + url.query if url.query else "")
    conn.sendall(
        f"POST {target} HTTP/1.1\r\nHost: {url.netloc}\r\n{auth}"
        "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
    )
    answer = Answer(conn)
    for start in range(0, len(text), size):
        chunk = text[start : start + size]
        conn.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        # What this chunk made certain arrives now, before the next is sent.
        for line in answer.lines(wait=0.2):
            show(f"after byte {start + len(chunk):>3}", line)
        time.sleep(0.02)
    conn.sendall(b"0\r\n\r\n")
    for line in answer.lines(wait=None):
        show("at the end     ", line)


def show(when: str, line: dict) -> None:
    if line.get("event") == "violation":
        print(f"{when}: violation {line['path']} {line['code']} (bytes {line['start']}..{line['offset']})")
    elif line.get("event") == "release":
        print(f"{when}: release up to byte {line['up_to']}")
    elif "error" in line and "status" not in line:
        print(f"{when}: error {line['error']['code']}: {line['error']['message']}")
    else:
        print(f"{when}: {line['status']} score {json.dumps(line['score'])}, issues {[i['code'] for i in line['issues']]}")


class Answer:
    """The chunked NDJSON answer, read as it comes."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.raw = b""
        self.body = b""
        self.head = None
        self.ended = False

    def lines(self, wait):
        """The answer's whole lines: those that came within `wait` seconds
        (each), or, with None, every line up to the answer's end."""
        while not self.ended:
            ready, _, _ = select.select([self.conn], [], [], wait)
            if not ready:
                break
            data = self.conn.recv(65536)
            if not data:
                self.ended = True
                break
            self.raw += data
            self.parse()
            if wait is not None and b"\n" in self.body:
                break
        *whole, self.body = self.body.split(b"\n")
        return [json.loads(line) for line in whole if line.strip()]

    def parse(self) -> None:
        if self.head is None:
            if b"\r\n\r\n" not in self.raw:
                return
            self.head, self.raw = self.raw.split(b"\r\n\r\n", 1)
            status = self.head.split(b"\r\n", 1)[0].decode()
            if " 200 " not in status + " ":
                sys.exit(f"{status}\n{self.raw.decode(errors='replace')}")
        while b"\r\n" in self.raw:
            size_line, rest = self.raw.split(b"\r\n", 1)
            size = int(size_line, 16)
            if len(rest) < size + 2:
                return
            if size == 0:
                self.ended = True
            self.body += rest[:size]
            self.raw = rest[size + 2 :]


if __name__ == "__main__":
    main()
