# Prints the number of samples a pprof profile (.pb.gz) holds: the sum of
# its "samples"/"count" values, unweighted. Decodes just enough of
# profile.proto: Profile.sample_type (1), Profile.sample (2) with its
# values (2, packed or not) and labels (3), Profile.string_table (6).
#   pprof_count.py FILE.pb.gz            the count
#   pprof_count.py FILE.pb.gz --by KEY   the count per value of label KEY,
#                                        "VALUE COUNT" lines (string or number)
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
            vals, labels = [], []
            for n, w, x in fields(v):
                if n == 2:
                    vals += values(w, x)
                elif n == 3:
                    labels.append({ln: lx for ln, _, lx in fields(x)})
            samples.append((vals, labels))
        elif num == 6:
            strings.append(v.decode())
    names = [(strings[t.get(1, 0)], strings[t.get(2, 0)]) for t in types]
    k = names.index(("samples", "count"))
    if len(sys.argv) > 3 and sys.argv[2] == "--by":
        by = {}
        for vals, labels in samples:
            for lab in labels:
                if strings[lab.get(1, 0)] == sys.argv[3] and len(vals) > k:
                    value = strings[lab[2]] if lab.get(2) else str(lab.get(3, 0))
                    by[value] = by.get(value, 0) + vals[k]
        for value in sorted(by):
            print(value, by[value])
        return
    print(sum(s[k] for s, _ in samples if len(s) > k))


if __name__ == "__main__":
    main()
