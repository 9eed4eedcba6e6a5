#!/usr/bin/env node
// Runs ONNX models in onnxruntime (the npm package onnxruntime-node, found through NODE_PATH or
// node_modules) and prints their outputs as JSON: the independent runtime of the export tests
// (tests/unit_onnx/test_onnx_export.cpp).
//
//   node run_onnxruntime.js MODEL.onnx INPUTS.json [MODEL2.onnx INPUTS2.json ...]
//
// INPUTS.json: {"X": {"dims": [150, 4], "type": "float32", "data": [5.1, 3.5, ...]}} (null for
// NaN; "type" float32, the default, float64 or int64).
// Prints one JSON array, an entry per model: {"label": {"dims": [150], "data": [0, 2, ...]},
// ...}, int64 outputs as numbers. Exit status 1 with a message on stderr when anything fails.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function runOne(modelPath, inputPath) {
  const session = await ort.InferenceSession.create(modelPath);
  const spec = JSON.parse(fs.readFileSync(inputPath, 'utf8'));
  const feeds = {};
  for (const [name, value] of Object.entries(spec)) {
    // JSON has no NaN: the tests write a missing value as null. "type" float64 feeds doubles
    // (a float64 export), int64 integers (codes, labels), anything else float32.
    if (value.type === 'int64') {
      feeds[name] = new ort.Tensor('int64', BigInt64Array.from(value.data, (v) => BigInt(v)), value.dims);
      continue;
    }
    const type = value.type === 'float64' ? 'float64' : 'float32';
    const Array_ = type === 'float64' ? Float64Array : Float32Array;
    const data = Array_.from(value.data, (v) => (v === null ? NaN : v));
    feeds[name] = new ort.Tensor(type, data, value.dims);
  }
  const results = await session.run(feeds);
  const out = {};
  for (const name of session.outputNames) {
    const t = results[name];
    out[name] = {
      dims: Array.from(t.dims, Number),
      type: t.type,
      data: Array.from(t.data, Number),
    };
  }
  return out;
}

async function main() {
  const args = process.argv.slice(2);
  if (args.length === 0 || args.length % 2 !== 0) {
    throw new Error('usage: run_onnxruntime.js MODEL.onnx INPUTS.json [MODEL INPUTS ...]');
  }
  const all = [];
  for (let i = 0; i < args.length; i += 2) all.push(await runOne(args[i], args[i + 1]));
  process.stdout.write(JSON.stringify(all) + '\n');
}

main().catch((e) => {
  process.stderr.write('run_onnxruntime.js: ' + (e && e.message ? e.message : String(e)) + '\n');
  process.exit(1);
});
