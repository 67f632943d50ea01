// ort_bench.js - ONNX Runtime (onnxruntime-node, CPU) side of bench/model_bench.py: runs
// the graphs bench/onnx_export.py wrote and prints one JSON object on stdout.
//
//   node ort_bench.js JOB.json
//
// JOB.json (written by model_bench.py):
//   {"threads": 2, "repeat": R, "dir": "DIR with the .onnx files and the inputs",
//    "case": "encode", "inputs": [{"name", "dtype": "int64", "shape", "file"}],
//    "output": "FILE for the last run's memory (raw float32)"}
//   {"threads": 2, "repeat": R, "dir": "...", "case": "greedy", "src_ids": INPUT,
//    "src_lengths": INPUT, "steps": N, "bos": 1, "layers": L, "heads": H, "dk": DK}
// Prints {"median_ms": M, "version": "1.30.0"} and, for greedy, "tokens" (one row of ids
// per source). Each case runs once to warm up, then R timed times.
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function readInput(dir, spec) {
  const bytes = fs.readFileSync(path.join(dir, spec.file));
  const typed = {int64: BigInt64Array, float32: Float32Array}[spec.dtype];
  if (!typed) throw new Error(`${spec.file}: dtype ${spec.dtype}: not int64 or float32`);
  const data =
      new typed(bytes.buffer, bytes.byteOffset, bytes.length / typed.BYTES_PER_ELEMENT);
  return new ort.Tensor(spec.dtype, data, spec.shape);
}

async function open(job, file) {
  return ort.InferenceSession.create(path.join(job.dir, file), {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: job.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
}

async function medianMs(repeat, fn) {
  await fn(); // warm-up
  const times = [];
  for (let r = 0; r < repeat; ++r) {
    const start = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const mid = times.length >> 1;
  return times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
}

async function encode(job) {
  const session = await open(job, 'encoder.onnx');
  const feeds = {};
  for (const spec of job.inputs) feeds[spec.name] = readInput(job.dir, spec);
  let memory;
  const ms = await medianMs(job.repeat, async () => {
    memory = (await session.run(feeds)).memory;
  });
  fs.writeFileSync(job.output, Buffer.from(memory.data.buffer, memory.data.byteOffset,
                                           memory.data.byteLength));
  return {median_ms: ms};
}

// Greedy decoding: encoder, decode_start (cross-attention keys and values, computed
// once), then one decode_step per token. Each layer's cache has two buffers of full
// capacity: a step reads its past from one and has ONNX Runtime write its present
// straight into the other (a preallocated output), so no cache is copied out of ONNX
// Runtime. The arg-max takes the lowest id on a tie, as Kiln and PyTorch do.
async function greedy(job) {
  const [encoder, start, step] = await Promise.all(
      ['encoder.onnx', 'decode_start.onnx', 'decode_step.onnx'].map((f) => open(job, f)));
  const srcIds = readInput(job.dir, job.src_ids);
  const srcLengths = readInput(job.dir, job.src_lengths);
  const batch = srcIds.dims[0];
  const names = (prefix) => {
    const out = [];
    for (let i = 0; i < job.layers; ++i) out.push(`${prefix}_k_${i}`, `${prefix}_v_${i}`);
    return out;
  };
  const crossNames = names('cross'), pastNames = names('past');
  const presentNames = names('present');
  const positionSize = batch * job.heads * job.dk;
  const caches =
      pastNames.map(() => [0, 1].map(() => new Float32Array(positionSize * job.steps)));
  const cacheAt = (i, p, positions) => new ort.Tensor(
      'float32', caches[i][p % 2].subarray(0, positionSize * positions),
      [batch, job.heads, positions, job.dk]);
  let tokens;
  const run = async () => {
    const {memory} = await encoder.run({src_ids: srcIds, src_lengths: srcLengths});
    const started = await start.run({memory, src_lengths: srcLengths});
    const feeds = {pad_bias: started.pad_bias};
    crossNames.forEach((n) => { feeds[n] = started[n]; });
    const ids = new BigInt64Array(batch).fill(BigInt(job.bos));
    tokens = Array.from({length: batch}, () => []);
    for (let p = 0; p < job.steps; ++p) {
      feeds.tgt_ids = new ort.Tensor('int64', ids, [batch, 1]);
      feeds.step = new ort.Tensor('int64', BigInt64Array.of(BigInt(p)), [1]);
      const fetches = {logits: null};
      pastNames.forEach((n, i) => {
        feeds[n] = cacheAt(i, p, p);
        fetches[presentNames[i]] = cacheAt(i, p + 1, p + 1);
      });
      const logits = (await step.run(feeds, fetches)).logits;
      const vocab = logits.dims[1];
      for (let b = 0; b < batch; ++b) {
        let best = 0;
        for (let v = 1; v < vocab; ++v)
          if (logits.data[b * vocab + v] > logits.data[b * vocab + best]) best = v;
        ids[b] = BigInt(best);
        tokens[b].push(best);
      }
    }
  };
  const ms = await medianMs(job.repeat, run);
  return {median_ms: ms, tokens};
}

async function main() {
  if (process.argv.length !== 3) throw new Error('usage: node ort_bench.js JOB.json');
  const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const cases = {encode, greedy};
  if (!cases[job.case]) throw new Error(`${process.argv[2]}: unknown case '${job.case}'`);
  const result = await cases[job.case](job);
  result.version = ort.env.versions.node;
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((e) => {
  process.stderr.write(`ort_bench.js: error: ${e.message}\n`);
  process.exit(1);
});
