#!/usr/bin/env node
// The onnx_infer anchor: onnxruntime (the npm package onnxruntime-node, default CPU provider)
// timing the models onelearn-onnx-bench wrote, with the same inputs' shapes, batches and
// method (a warm-up, then the median of R timings of enough runs to take about 0.1 s each).
//
//   node onnxruntime_bench.js DIR [--repeats R] [--threads T] [mlp] [cnn]
//
// One JSON line per (model, batch), as onelearn-onnx-bench prints them, with "impl":
// "onnxruntime". --threads sets the session's intra-op threads (default: onnxruntime's own, one
// per core); pass OMP_NUM_THREADS's value to compare like with like. onnxruntime-node is found
// through NODE_PATH or node_modules (scripts/test.sh installs it into build-onnxrt/).
'use strict';
const path = require('path');
const ort = require('onnxruntime-node');

const SAMPLE_SHAPES = { mlp: [784], cnn: [1, 28, 28] };

async function timeRuns(session, feeds, repeats) {
  for (let i = 0; i < 5; ++i) await session.run(feeds);
  let start = process.hrtime.bigint();
  await session.run(feeds);
  const once = Number(process.hrtime.bigint() - start) / 1e9;
  const runs = Math.max(1, Math.floor(0.1 / Math.max(once, 1e-7)));
  const perRun = [];
  for (let r = 0; r < repeats; ++r) {
    start = process.hrtime.bigint();
    for (let i = 0; i < runs; ++i) await session.run(feeds);
    perRun.push(Number(process.hrtime.bigint() - start) / 1e9 / runs);
  }
  perRun.sort((a, b) => a - b);
  return [perRun[Math.floor(perRun.length / 2)], perRun[0]];
}

async function main() {
  const args = process.argv.slice(2);
  let repeats = 5, threads = 0;
  const models = [];
  let dir = null;
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--repeats') repeats = Number(args[++i]);
    else if (args[i] === '--threads') threads = Number(args[++i]);
    else if (args[i] in SAMPLE_SHAPES) models.push(args[i]);
    else if (dir === null) dir = args[i];
    else throw new Error('unexpected argument ' + args[i]);
  }
  if (dir === null || !(repeats >= 1)) {
    throw new Error('usage: onnxruntime_bench.js DIR [--repeats R] [--threads T] [mlp] [cnn]');
  }
  const options = threads > 0 ? { intraOpNumThreads: threads } : {};
  for (const name of models.length ? models : ['mlp', 'cnn']) {
    const session = await ort.InferenceSession.create(path.join(dir, name + '.onnx'), options);
    for (const batch of [1, 64]) {
      const shape = [batch, ...SAMPLE_SHAPES[name]];
      const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
      for (let i = 0; i < data.length; ++i) data[i] = Math.sin(i);  // any finite values
      const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', data, shape) };
      const [median, best] = await timeRuns(session, feeds, repeats);
      console.log(JSON.stringify({
        workload: 'onnx_infer', impl: 'onnxruntime', model: name, batch, threads: threads || null,
        seconds: median, best_seconds: best, samples_per_second: batch / median,
      }));
    }
  }
}

main().catch((e) => {
  process.stderr.write('onnxruntime_bench.js: ' + (e && e.message ? e.message : String(e)) + '\n');
  process.exit(1);
});
