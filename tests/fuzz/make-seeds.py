#!/usr/bin/env python3
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
