// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// hotwriter.js N: a JavaScript function, hotWriterJs, makes N write(2)
// calls to /dev/null (fs.writeSync), so that node --perf-basic-prof names
// JIT frames for --stacks; then waits 300 ms before exiting.
const fs = require('fs');
const fd = fs.openSync('/dev/null', 'w');
const buf = Buffer.from('x');

function hotWriterJs(n) {
  for (let i = 0; i < n; i++) fs.writeSync(fd, buf);
}

hotWriterJs(Number(process.argv[2] || 50000));
setTimeout(() => {}, 300);
