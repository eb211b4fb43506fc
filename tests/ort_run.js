#!/usr/bin/env node
// ort_run.js: ONNX Runtime (CPU execution provider) as the tests' reference.
//
//   node tests/ort_run.js MODEL.onnx IN_DIR OUT_DIR [--speed]
//
// Reads IN_DIR/input_N.pb (ONNX TensorProto, the backend-test layout; N = 0,1,...
// in the order of the model's inputs), runs the model once and writes
// OUT_DIR/output_N.pb (TensorProto: name, dims, data_type, raw_data) in the
// order of the model's outputs.  ORT runs at graph optimization level "basic"
// (constant folding, redundant nodes removed), not "all": at "all" it fuses a
// QDQ model's DequantizeLinear -> Conv -> QuantizeLinear into its own int8
// kernels, whose results depend on the CPU (on x86 without VNNI its u8s8
// kernels saturate int16 pair sums: cosine 0.98 on a ResNet-50 that is 0.9999
// on a VNNI machine), and a reference must not.  "basic" computes the QDQ
// graph as written: dequantize, float op, quantize.
// --speed is for bench/model_speed.py: ORT as a user would time it, one
// intra-op and one inter-op thread at ORT's default optimization level
// ("all": a fair opponent, not a reference), and it prints
// "ort_ms session=<create> run=<one inference>" on stdout.
// Needs tests/ort/node_modules (cd tests/ort && npm ci --ignore-scripts).
//
// The TensorProto codec is written here (protobuf wire format, only the fields
// a tensor file uses) so the reference needs nothing but onnxruntime-node.
'use strict';

const fs = require('fs');
const path = require('path');

function die(msg) {
	process.stderr.write('ort_run.js: ' + msg + '\n');
	process.exit(1);
}

let ort;
try {
	ort = require(path.join(__dirname, 'ort', 'node_modules', 'onnxruntime-node'));
} catch (e) {
	die('onnxruntime-node is not installed (cd tests/ort && npm ci --ignore-scripts): ' + e.message);
}

// ONNX TensorProto.DataType values and their ORT names / element sizes.
const DT = {
	1: { name: 'float32', size: 4 },
	2: { name: 'uint8', size: 1 },
	3: { name: 'int8', size: 1 },
	6: { name: 'int32', size: 4 },
	7: { name: 'int64', size: 8 },
	9: { name: 'bool', size: 1 },
	10: { name: 'float16', size: 2 },
};
const DT_OF = {};
for (const k of Object.keys(DT))
	DT_OF[DT[k].name] = Number(k);

// ---- protobuf wire format ----------------------------------------------------
// Varints are read as BigInt: int64 dims and int64_data use all 64 bits.
function readVarint(buf, pos) {
	let v = 0n, shift = 0n;
	for (;;) {
		if (pos.p >= buf.length)
			throw new Error('truncated varint');
		const b = buf[pos.p++];
		v |= BigInt(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
		shift += 7n;
		if (shift > 70n)
			throw new Error('varint too long');
	}
}
const asInt64 = (v) => BigInt.asIntN(64, v);

function decodeTensor(buf, file) {
	const t = { dims: [], data_type: 0, name: '', raw: null, float_data: [], int32_data: [],
		int64_data: [] };
	const pos = { p: 0 };
	// Repeated numeric fields may be packed (wire type 2) or not (their own type).
	const repeated = (wire, readOne, out) => {
		if (wire === 2) {
			const len = Number(readVarint(buf, pos));
			const end = pos.p + len;
			while (pos.p < end)
				out.push(readOne());
		} else {
			out.push(readOne());
		}
	};
	const varint = () => asInt64(readVarint(buf, pos));
	const f32 = () => { const v = buf.readFloatLE(pos.p); pos.p += 4; return v; };
	while (pos.p < buf.length) {
		const key = Number(readVarint(buf, pos));
		const field = key >>> 3, wire = key & 7;
		if (field === 1) repeated(wire, varint, t.dims);
		else if (field === 2 && wire === 0) t.data_type = Number(varint());
		else if (field === 4) repeated(wire, f32, t.float_data);
		else if (field === 5) repeated(wire, varint, t.int32_data);
		else if (field === 7) repeated(wire, varint, t.int64_data);
		else if ((field === 8 || field === 9) && wire === 2) {
			const len = Number(readVarint(buf, pos));
			if (pos.p + len > buf.length)
				throw new Error('truncated field ' + field);
			const s = buf.subarray(pos.p, pos.p + len);
			pos.p += len;
			if (field === 8) t.name = s.toString('utf8');
			else t.raw = Buffer.from(s);
		} else {
			// skip any other field (segment, doc_string, external data, ...)
			if (wire === 0) readVarint(buf, pos);
			else if (wire === 1) pos.p += 8;
			else if (wire === 5) pos.p += 4;
			else if (wire === 2) pos.p += Number(readVarint(buf, pos));
			else throw new Error('unsupported wire type ' + wire);
		}
	}
	if (pos.p !== buf.length)
		throw new Error('truncated message');
	const dt = DT[t.data_type];
	if (!dt)
		die(file + ': tensor data_type ' + t.data_type + ' not supported yet');
	const dims = t.dims.map(Number);
	const n = dims.reduce((a, b) => a * b, 1);
	let data;
	if (t.raw) {
		if (t.raw.length !== n * dt.size)
			die(file + ': raw_data holds ' + t.raw.length + ' bytes, dims ' + JSON.stringify(dims) +
				' need ' + n * dt.size);
		const ab = t.raw.buffer.slice(t.raw.byteOffset, t.raw.byteOffset + t.raw.length);
		data = {
			float32: () => new Float32Array(ab), uint8: () => new Uint8Array(ab),
			int8: () => new Int8Array(ab), int32: () => new Int32Array(ab),
			int64: () => new BigInt64Array(ab), bool: () => new Uint8Array(ab).map((v) => v ? 1 : 0),
			float16: () => new Uint16Array(ab),
		}[dt.name]();
	} else {
		// Typed fields: float in float_data; int64 in int64_data; the small
		// integer types, bool and float16 (its bits) in int32_data.
		const src = dt.name === 'float32' ? t.float_data : dt.name === 'int64' ? t.int64_data :
			t.int32_data;
		if (src.length !== n)
			die(file + ': ' + src.length + ' values, dims ' + JSON.stringify(dims) + ' need ' + n);
		data = {
			float32: () => Float32Array.from(src), uint8: () => Uint8Array.from(src, Number),
			int8: () => Int8Array.from(src, Number), int32: () => Int32Array.from(src, Number),
			int64: () => BigInt64Array.from(src), bool: () => Uint8Array.from(src, (v) => v ? 1 : 0),
			float16: () => Uint16Array.from(src, Number),
		}[dt.name]();
	}
	return { name: t.name, dims, type: dt.name, data };
}

function writeVarint(out, v) {
	let x = BigInt.asUintN(64, BigInt(v));
	do {
		let b = Number(x & 0x7fn);
		x >>= 7n;
		if (x) b |= 0x80;
		out.push(b);
	} while (x);
}

function encodeTensor(name, dims, dataType, raw) {
	const out = [];
	for (const d of dims) { // field 1, unpacked varints: every reader accepts them
		writeVarint(out, (1 << 3) | 0);
		writeVarint(out, d);
	}
	writeVarint(out, (2 << 3) | 0);
	writeVarint(out, dataType);
	const nm = Buffer.from(name, 'utf8');
	writeVarint(out, (8 << 3) | 2);
	writeVarint(out, nm.length);
	const head = Buffer.concat([Buffer.from(out), nm]);
	const tail = [];
	writeVarint(tail, (9 << 3) | 2);
	writeVarint(tail, raw.length);
	return Buffer.concat([head, Buffer.from(tail), raw]);
}

// ---- main --------------------------------------------------------------------
async function main() {
	let args = process.argv.slice(2);
	const speed = args.includes('--speed');
	args = args.filter((a) => a !== '--speed');
	if (args.length !== 3)
		die('usage: node tests/ort_run.js MODEL.onnx IN_DIR OUT_DIR [--speed]');
	const [model, inDir, outDir] = args;
	if (!fs.existsSync(model))
		die(model + ': no such file');
	if (!fs.existsSync(inDir) || !fs.statSync(inDir).isDirectory())
		die(inDir + ': no such directory');
	let session;
	const opts = { executionProviders: ['cpu'], graphOptimizationLevel: 'basic',
		logSeverityLevel: 3 }; // errors only: old-opset warnings are noise here
	if (speed) {
		opts.graphOptimizationLevel = 'all';
		opts.intraOpNumThreads = 1;
		opts.interOpNumThreads = 1;
		opts.executionMode = 'sequential';
	}
	const t0 = process.hrtime.bigint();
	try {
		session = await ort.InferenceSession.create(model, opts);
	} catch (e) {
		die(model + ': ONNX Runtime could not load it: ' + e.message);
	}
	const feeds = {};
	session.inputNames.forEach((name, i) => {
		const file = path.join(inDir, 'input_' + i + '.pb');
		if (!fs.existsSync(file))
			die(file + ': no such file (model input ' + i + ' "' + name + '")');
		let t;
		try {
			t = decodeTensor(fs.readFileSync(file), file);
		} catch (e) {
			die(file + ': not a TensorProto: ' + e.message);
		}
		feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
	});
	let results;
	const t1 = process.hrtime.bigint();
	try {
		results = await session.run(feeds);
	} catch (e) {
		die(model + ': ONNX Runtime run failed: ' + e.message);
	}
	const t2 = process.hrtime.bigint();
	if (speed)
		process.stdout.write('ort_ms session=' + (Number(t1 - t0) / 1e6).toFixed(3) +
			' run=' + (Number(t2 - t1) / 1e6).toFixed(3) + '\n');
	fs.mkdirSync(outDir, { recursive: true });
	session.outputNames.forEach((name, i) => {
		const r = results[name];
		const dt = DT_OF[r.type];
		if (dt === undefined)
			die('output "' + name + '": type ' + r.type + ' not supported yet');
		const d = r.data;
		let raw;
		if (r.type === 'bool')
			raw = Buffer.from(Uint8Array.from(d, (v) => v ? 1 : 0));
		else
			raw = Buffer.from(d.buffer, d.byteOffset, d.byteLength);
		fs.writeFileSync(path.join(outDir, 'output_' + i + '.pb'),
			encodeTensor(name, r.dims, dt, raw));
	});
}

main().catch((e) => die(e.stack || String(e)));
