// Validates speedscope files against speedscope's own published schema
// (the npm package's dist/release/file-format-schema.json) with ajv, and
// prints a TAP line per file:  node speedscope_schema.js FILE...
'use strict';
const fs = require('fs');
const Ajv = require('ajv');

const schema = JSON.parse(fs.readFileSync(require.resolve('speedscope/dist/release/file-format-schema.json'), 'utf8'));
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);
let failed = 0;
for (const file of process.argv.slice(2)) {
  const ok = validate(JSON.parse(fs.readFileSync(file, 'utf8')));
  console.log((ok ? 'ok' : 'not ok') + ' - speedscope: ' + require('path').basename(file) +
    ' validates against speedscope\'s schema' + (ok ? '' : ': ' + ajv.errorsText(validate.errors)));
  if (!ok) failed++;
}
process.exit(failed ? 1 : 0);
