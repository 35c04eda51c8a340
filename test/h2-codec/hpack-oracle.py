# python3-hpack as a reference HPACK codec for the differential tests: JSON lines in (one request each), JSON lines out.
# Strings travel as latin1 (one char per octet), as our codec keeps them. Encoders and decoders are kept by id, so one
# process holds many connections' tables.
import json
import sys

from hpack import Decoder, Encoder, HeaderTuple, NeverIndexedHeaderTuple
from hpack.exceptions import HPACKError

encoders = {}
decoders = {}


def latin1(text):
    return text.encode("latin-1")


def answer(request):
    op = request["op"]
    key = request["id"]
    if op == "new":
        encoders[key] = Encoder()
        decoder = Decoder(max_header_list_size=1 << 30)
        decoders[key] = decoder
        return {}
    if op == "drop":
        encoders.pop(key, None)
        decoders.pop(key, None)
        return {}
    if op == "setting":
        # Our side's SETTINGS_HEADER_TABLE_SIZE, acknowledged: the most a size update may ask of this decoder.
        decoders[key].max_allowed_table_size = request["size"]
        return {}
    if op == "peer-setting":
        encoders[key].header_table_size = request["size"]
        return {}
    if op == "encode":
        never = set(request.get("never", []))
        headers = []
        for i in range(0, len(request["fields"]), 2):
            pair = (latin1(request["fields"][i]), latin1(request["fields"][i + 1]))
            headers.append(NeverIndexedHeaderTuple(*pair) if i in never else HeaderTuple(*pair))
        block = encoders[key].encode(headers, huffman=request.get("huffman", True))
        return {"hex": block.hex(), "tableSize": encoders[key].header_table._current_size}
    if op == "decode":
        decoder = decoders[key]
        try:
            headers = decoder.decode(bytes.fromhex(request["hex"]), raw=True)
        except (HPACKError, ValueError, IndexError) as error:
            return {"error": type(error).__name__ + ": " + str(error)}
        fields = []
        never = []
        for header in headers:
            if not header.indexable:
                never.append(len(fields))
            fields.append(header[0].decode("latin-1"))
            fields.append(header[1].decode("latin-1"))
        return {"fields": fields, "never": never, "tableSize": decoder.header_table._current_size, "tableMax": decoder.header_table.maxsize}
    return {"error": "unknown op " + op}


for line in sys.stdin:
    request = json.loads(line)
    try:
        reply = answer(request)
    except Exception as error:  # a crash in the oracle is reported, not fatal to the run
        reply = {"crash": type(error).__name__ + ": " + str(error)}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
