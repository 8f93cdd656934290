# Prints the number of samples a pprof profile (.pb.gz) holds: the sum of
# its "samples"/"count" values, unweighted. Decodes just enough of
# profile.proto: Profile.sample_type (1), Profile.sample (2) with its
# values (2, packed or not), Profile.string_table (6).
#   pprof_count.py FILE.pb.gz
import gzip
import sys


def varint(b, i):
    v, shift = 0, 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field number, wire type, value) of a message: ints or bytes."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(b, i)
        elif wire == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wire == 1:
            v, i = b[i:i + 8], i + 8
        elif wire == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wire)
        yield num, wire, v


def values(wire, v):
    if wire == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def main():
    data = gzip.open(sys.argv[1]).read()
    types, samples, strings = [], [], []
    for num, wire, v in fields(data):
        if num == 1:
            types.append({n: x for n, _, x in fields(v)})
        elif num == 2:
            vals = []
            for n, w, x in fields(v):
                if n == 2:
                    vals += values(w, x)
            samples.append(vals)
        elif num == 6:
            strings.append(v.decode())
    names = [(strings[t.get(1, 0)], strings[t.get(2, 0)]) for t in types]
    k = names.index(("samples", "count"))
    print(sum(s[k] for s in samples if len(s) > k))


if __name__ == "__main__":
    main()
