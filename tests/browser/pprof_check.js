// Decodes a .pb.gz with the npm package pprof-format and checks it: the
// sample types, that every id a sample, location or line refers to exists,
// that every string index is in the table, and the labels. Prints TAP.
//   node pprof_check.js FILE.pb.gz EXPECTED_SAMPLES
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const { Profile } = require('pprof-format');

const [file, expected] = process.argv.slice(2);
let failed = 0;
function check(name, cond, why) {
  console.log((cond ? 'ok - ' : 'not ok - ') + 'pprof: ' + name + (cond || !why ? '' : ': ' + why));
  if (!cond) failed++;
}
const p = Profile.decode(zlib.gunzipSync(fs.readFileSync(file)));
const nstr = p.stringTable.strings.length;
const s = (i) => p.stringTable.strings[Number(i)];
const types = p.sampleType.map((v) => s(v.type) + '/' + s(v.unit)).join(',');
check('sample types are samples/count and wall/nanoseconds', types === 'samples/count,wall/nanoseconds', types);
const locs = new Set(p.location.map((l) => Number(l.id)));
const funcs = new Set(p.function.map((f) => Number(f.id)));
const maps = new Set(p.mapping.map((m) => Number(m.id)));
const bad = [];
p.sample.forEach((x, i) => x.locationId.forEach((id) => { if (!locs.has(Number(id))) bad.push('sample ' + i + ' location ' + id); }));
p.location.forEach((l) => {
  if (Number(l.mappingId) && !maps.has(Number(l.mappingId))) bad.push('location ' + l.id + ' mapping ' + l.mappingId);
  l.line.forEach((ln) => { if (!funcs.has(Number(ln.functionId))) bad.push('location ' + l.id + ' function ' + ln.functionId); });
});
p.function.forEach((f) => [f.name, f.systemName, f.filename].forEach((i) => { if (Number(i) >= nstr) bad.push('function ' + f.id + ' string ' + i); }));
check('every referenced id and string exists (' + p.sample.length + ' samples, ' + p.location.length +
  ' locations, ' + p.function.length + ' functions, ' + p.mapping.length + ' mappings)', bad.length === 0, bad.slice(0, 5).join('; '));
const count = p.sample.reduce((a, x) => a + Number(x.value[0]), 0);
check('samples add up to the recording\'s ' + expected, count === Number(expected), String(count));
const labelled = p.sample.every((x) => ['pid', 'tid'].every((k) => x.label.some((l) => s(l.key) === k)));
const named = p.sample.some((x) => x.label.some((l) => s(l.key) === 'thread' && s(l.str) === 'loader'));
check('samples carry pid, tid and thread labels', labelled && named);
const fwd = p.function.find((f) => s(f.name) === 'forward');
check('a Python function has its file', fwd && s(fwd.filename) === 'train.py', fwd && s(fwd.filename));
process.exit(failed ? 1 : 0);
