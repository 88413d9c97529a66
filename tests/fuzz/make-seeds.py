#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""make-seeds.py: writes the seed corpora under corpus/ (run once; the outputs are committed).

Seeds are small, meaningful frames: every frame type of docs/protocol.md §6-7, valid and at the
edges of their limits, so the fuzzer starts from the shapes the engine really sees."""
import base64
import os

HERE = os.path.dirname(os.path.abspath(__file__))
CHUNK = 262144


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def write(kind: str, name: str, text: str) -> None:
    d = os.path.join(HERE, "corpus", kind)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(text.encode())


def chunk(tid: str, index: int, total: int, nbytes: int, data: bytes) -> str:
    return ('{"type":"chunk","transferId":"%s","index":%d,"total":%d,"originalBytes":%d,'
            '"data":"%s"}' % (tid, index, total, nbytes, b64url(data)))


# --- frame: one frame text per file ---
frames = {
    "request": '{"type":"request","id":"e-41","method":"browser.tabs","params":{},"timeoutMs":10000}',
    "request-nested-params": '{"type":"request","id":"e1","method":"page.find","params":'
                             '{"query":"caf\\u00e9 \\ud83d\\ude00","limits":[1,2.5,-3e2,null,true],'
                             '"opts":{"deep":{"er":[{}]}}},"timeoutMs":86400000}',
    "request-no-params": '{"type":"request","id":"c2","method":"engine.fly"}',
    "response-result": '{"type":"response","id":"e-41","result":{"tabs":[{"id":7,"title":"A \\"quoted\\" tab"}]}}',
    "response-error": '{"type":"response","id":"e-42","error":{"code":"stale_document",'
                      '"message":"The tab navigated","data":{"tabId":7}}}',
    "response-null": '{"type":"response","id":"x","result":null}',
    "event": '{"type":"event","event":"grant.changed","data":{"grants":[]},"sequence":17,'
             '"timestamp":1718000000000}',
    "cancel": '{"type":"cancel","id":"e-43"}',
    "ping": '{"type":"ping","sequence":5,"timestamp":1718000015000}',
    "pong-double": '{"type":"pong","sequence":5.0,"timestamp":1718000015000,"replyTimestamp":1.718000015001e12}',
    "chunk": chunk("t1", 0, 1, 26, b'{"type":"cancel","id":"a"}'),
    "error": '{"type":"error","code":"too_large","message":"A message may be at most 16777216 bytes",'
             '"transferId":"t9"}',
    "hello-ack": '{"type":"hello_ack","protocol":1,"sessionId":"s","resumed":false,"lastSequence":0,'
                 '"limits":{"maxInFlight":8,"chunkThreshold":524288}}',
    "unknown-type": '{"type":"h\\u00e9llo","id":"1"}',
    "id-128": '{"type":"cancel","id":"' + "~" * 128 + '"}',
    "deep-64": '{"type":"event","event":"d","sequence":0,"data":' + "[" * 63 + "]" * 63 + "}",
    "deep-65": '{"type":"event","event":"d","sequence":0,"data":' + "[" * 64 + "]" * 64 + "}",
}
for name, text in frames.items():
    write("frame", name, text)
# Not UTF-8: refused before json-glib sees it.
with open(os.path.join(HERE, "corpus", "frame", "bad-utf8"), "wb") as f:
    f.write(b'{"type":"cancel","id":"a\xff"}')

# --- chunk: steps, one per line (see fuzz-chunk.c) ---
small = b'{"type":"event","event":"e","sequence":3,"data":{"k":"v"}}'
write("chunk", "single-complete", chunk("s1", 0, 1, len(small), small) + "\n")
write("chunk", "three-chunks-600000", "!t3 0 3 600000\n!t3 1 3 600000\n!t3 2 3 600000\n")
write("chunk", "max-16MiB", "".join("!big %d 64 16777216\n" % i for i in range(64)))
write("chunk", "over-16MiB", "!big 0 65 16777217\n")
write("chunk", "interleaved", "!a 0 2 300000\n!b 0 2 262145\n!a 1 2 300000\n!b 1 2 262145\n")
write("chunk", "nine-open-busy", "".join("!t%d 0 2 300000\n" % i for i in range(9)))
write("chunk", "budget", "!a 0 64 16777216\n!b 0 1 1\n")
write("chunk", "gap", "!g 0 3 600000\n!g 2 3 600000\n")
write("chunk", "duplicate", "!d 0 3 600000\n!d 0 3 600000\n")
write("chunk", "total-changes", "!c 0 3 600000\n!c 1 4 786432\n")
write("chunk", "short-slice", "!s 0 2 300000 -1\n")
write("chunk", "long-last-slice", "!s 0 2 300000\n!s 1 2 300000 1\n")
write("chunk", "expired", "!e 0 2 300000\n+30000\n!e 1 2 300000\n")
write("chunk", "not-yet-expired", "!e 0 2 300000\n+29999\n!e 1 2 300000\n")
write("chunk", "padded-base64",
      '{"type":"chunk","transferId":"p","index":0,"total":1,"originalBytes":1,"data":"QQ=="}\n')
write("chunk", "trailing-bits",
      '{"type":"chunk","transferId":"p","index":0,"total":1,"originalBytes":1,"data":"QR"}\n')
inner = chunk("inner", 0, 1, 2, b"{}")
write("chunk", "chunk-in-chunk", chunk("outer", 0, 1, len(inner), inner.encode()) + "\n")

# --- mcp-session: an agent's bytes, one JSON-RPC message per line (see fuzz-mcp-session.c) ---
def rpc(id_, method, params=None):
    import json
    m = {"jsonrpc": "2.0", "method": method}
    if id_ is not None:
        m["id"] = id_
    if params is not None:
        m["params"] = params
    return json.dumps(m, ensure_ascii=False, separators=(",", ":"))


INIT = rpc(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": {"name": "fuzz", "version": "1.0"}})
READY = rpc(None, "notifications/initialized")
CALLS = {
    "tabs": ("browser_tabs", {}),
    "snapshot": ("browser_snapshot", {"tab": "b1:7", "frame": 0, "query": "Send", "page": 2,
                                      "diff": True}),
    "inspect": ("browser_inspect", {"tab": "b1:7", "ref": "3:e12"}),
    "act-click": ("browser_act", {"tab": "b1:7", "ref": "3:e12", "action": "click"}),
    "act-fill": ("browser_act", {"tab": "b1:7", "ref": "3:e12", "action": "fill",
                                 "value": "caf\u00e9 \U0001F600"}),
    "navigate": ("browser_navigate", {"tab": "b1:7", "url": "https://shop.example/cart"}),
    "handoff": ("browser_handoff", {"tab": "b1:7", "reason": "mfa", "message": "Enter the code"}),
    "wait": ("browser_wait", {"id": "b1:h-H1", "timeoutMs": 1}),
    "plan": ("browser_plan", {"summary": "Draft a reply", "steps": [
        {"kind": "create", "site": "mail.example", "summary": "Save the draft"}]}),
    "stop": ("browser_stop", {"reason": "done"}),
}


def session(*lines, crlf=False):
    return ("\r\n" if crlf else "\n").join(lines) + "\n"


for name, (tool, args) in CALLS.items():
    write("mcp-session", "call-" + name,
          session(INIT, READY, rpc(2, "tools/call", {"name": tool, "arguments": args,
                                                     "_meta": {"progressToken": "p1"}})))
write("mcp-session", "list-ping-level",
      session(INIT, READY, rpc(2, "tools/list"), rpc("s-3", "ping"),
              rpc(4, "logging/setLevel", {"level": "debug"})))
write("mcp-session", "cancel-in-flight",
      session(INIT, rpc(2, "tools/call", {"name": "browser_wait", "arguments": {"id": "b1:h-x"}}),
              rpc(None, "notifications/cancelled", {"requestId": 2, "reason": "user"})))
write("mcp-session", "before-initialize", session(rpc(1, "tools/list"), INIT))
write("mcp-session", "bad-lines",
      session(INIT, "[" + READY + "]", "42", '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
              '{"jsonrpc":"1.0","id":2,"method":"ping"}', '{"jsonrpc":"2.0","id":3}',
              '{"jsonrpc":"2.0","id":4,"method":7}', '{"jsonrpc":"2.0","id":5,"method":"nope"}',
              '{"jsonrpc":"2.0","id":6,"result":{}}', "{", "", "   \t",
              rpc(7, "tools/call", {"name": "browser_fly"}),
              rpc(8, "tools/call", {"name": "browser_act", "arguments": {"tab": "x"}}),
              rpc(9, "tools/call", {"name": "browser_tabs", "arguments": []})))
write("mcp-session", "duplicate-id",
      session(INIT, rpc(2, "tools/call", {"name": "browser_wait", "arguments": {"id": "b1:h-x"}}),
              rpc(2, "tools/call", {"name": "browser_wait", "arguments": {"id": "b1:h-x"}})))
write("mcp-session", "crlf", session(INIT, READY, rpc(2, "tools/list"), crlf=True))
write("mcp-session", "no-final-newline", INIT + "\n" + rpc(2, "ping"))

# --- pairing: steps, one per line (see fuzz-pairing.c) ---
write("pairing", "approved", "!request\n!reveal 0\n!approve\n")
write("pairing", "approved-replace", "!request\n!reveal 0\n!approve 1\n")
write("pairing", "rejected", "!request\n!reveal 0\n!reject\n")
write("pairing", "commitment-mismatch", "!request\n!reveal 1\n")
write("pairing", "bad-signature", "!request\n!reveal 2\n")
write("pairing", "other-request", "!request\n!reveal 3\n")
write("pairing", "reveal-first", "!reveal 0\n!request\n")
write("pairing", "twice", "!request\n!request\n")
write("pairing", "binary", "!binary {\"type\":\"pair_request\"}\n")
write("pairing", "closed-midway", "!request\n!close\n!reveal 0\n")
write("pairing", "approve-then-message", "!request\n!reveal 0\n!approve\n{\"type\":\"ping\"}\n")
write("pairing", "request-by-hand",
      '{"type":"pair_request","protocol":1,"installationId":"AAAAAAAAAAAAAAAAAAAAAA",'
      '"client":"c","version":"1","browser":"b","commitment":'
      '"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","publicKey":{"kty":"EC","crv":"P-256",'
      '"x":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","y":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}}\n')
write("pairing", "wrong-protocol",
      '{"type":"pair_request","protocol":2}\n')
write("pairing", "not-json", "pair_request\n")

# --- bridge-http: the bytes of one connection to the bridge (see fuzz-bridge-http.c) ---
ORIGIN = "chrome-extension://immigohjinbkkjncmhkefbfainfbcigp"


def upgrade(path, host="127.0.0.1:@PORT@", origin=ORIGIN, extra=""):
    return ("GET %s HTTP/1.1\r\nHost: %s\r\nOrigin: %s\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n%s\r\n" % (path, host, origin, extra))


def masked(text: bytes, opcode=1) -> bytes:
    key = b"\x01\x02\x03\x04"
    body = bytes(b ^ key[i % 4] for i, b in enumerate(text))
    n = len(body)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    else:
        head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
    return head + key + body


def write_bytes(kind: str, name: str, data: bytes) -> None:
    d = os.path.join(HERE, "corpus", kind)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


write("bridge-http", "extension", upgrade("/extension"))
write("bridge-http", "pairing", upgrade("/pairing"))
write_bytes("bridge-http", "pairing-then-frame",
            upgrade("/pairing").encode() + masked(b'{"type":"pair_request","protocol":1}'))
write_bytes("bridge-http", "extension-then-auth",
            upgrade("/extension").encode() + masked(b'{"type":"auth","protocol":1}') +
            masked(b"", opcode=8))
write("bridge-http", "localhost", upgrade("/extension", host="localhost:@PORT@"))
write("bridge-http", "wrong-host", upgrade("/extension", host="evil.example:@PORT@"))
write("bridge-http", "page-origin", upgrade("/pairing", origin="https://evil.example"))
write("bridge-http", "moz-origin",
      upgrade("/pairing", origin="moz-extension://0123abcd-0123-4567-89ab-0123456789ab"))
# Near misses of Firefox's spelling (uppercase, braces, a path): the gate's 403, for the fuzzer
# to mutate around the one shape it takes (tests/test-bridge-origins.c lists them all).
write("bridge-http", "moz-origin-upper",
      upgrade("/extension", origin="moz-extension://0123ABCD-0123-4567-89AB-0123456789AB"))
write("bridge-http", "moz-origin-braces",
      upgrade("/pairing", origin="moz-extension://{0123abcd-0123-4567-89ab-0123456789ab}"))
write("bridge-http", "moz-origin-path",
      upgrade("/pairing", origin="moz-extension://0123abcd-0123-4567-89ab-0123456789ab/popup/popup.html"))
write("bridge-http", "below-door", upgrade("/pairing/x"))
write("bridge-http", "deflate",
      upgrade("/extension", extra="Sec-WebSocket-Extensions: permessage-deflate\r\n"))
write("bridge-http", "plain-get", "GET / HTTP/1.1\r\nHost: 127.0.0.1:@PORT@\r\n\r\n")
write("bridge-http", "keep-alive-twice",
      "GET /extension HTTP/1.1\r\nHost: 127.0.0.1:@PORT@\r\nConnection: keep-alive\r\n\r\n" * 2)
write("bridge-http", "post-body",
      "POST /pairing HTTP/1.1\r\nHost: 127.0.0.1:@PORT@\r\nContent-Length: 5\r\n\r\nhello")
write("bridge-http", "chunked",
      "POST /x HTTP/1.1\r\nHost: 127.0.0.1:@PORT@\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n0\r\n\r\n")
write("bridge-http", "http10", "GET /extension HTTP/1.0\r\n\r\n")
write("bridge-http", "half-headers", "GET /extension HTTP/1.1\r\nHost: 127.0.0.1:@PORT@\r\nOri")
write("bridge-http", "garbage", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
write("bridge-http", "long-header", "GET /extension HTTP/1.1\r\nX: " + "a" * 6000 + "\r\n\r\n")
